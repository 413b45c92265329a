#!/usr/bin/env bash
# Installs what the tests use besides Node and git, when missing: sudo, cron (crontab), at
# bubblewrap (the kernel sandbox) and acl (setfacl) for the isolation tests (they make users, so CI runs
# them as root); python3 with pytest and Go for the tests of repositories that are not Node
# packages. As root this script installs with apt-get (Debian and Ubuntu). Anywhere else it
# only says what is missing and the command that installs it. (npm test itself names the
# tests a missing mode keeps from running: docs/testing.md, "Modes".)
set -euo pipefail
missing=()
for tool in sudo:sudo crontab:cron at:at flock:util-linux bwrap:bubblewrap setfacl:acl; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}")
done
command -v go >/dev/null 2>&1 || missing+=(golang-go)
python3 -m pytest --version >/dev/null 2>&1 || missing+=(python3-pytest)
# As root, the Action tests run gates as another user, which cannot enter root's home: a
# python3 with pytest must be on the system's own PATH too.
if [ "$(id -u)" = 0 ] && ! PATH=/usr/local/bin:/usr/bin:/bin python3 -m pytest --version >/dev/null 2>&1; then
  [[ " ${missing[*]-} " == *" python3-pytest "* ]] || missing+=(python3-pytest)
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "the tests need these packages: ${missing[*]} (install them: sudo apt-get install -y ${missing[*]})" >&2
  exit 1
fi
