// `node scripts/cached-check.mjs <eslint|typecheck> [tool options]`: one of `npm test`'s checks,
// with the tool's own cache kept in the tests' cache folder, so that a fresh clone on the same
// machine checks again only what changed since the last run (docs/testing.md, "The checks'
// caches").
//
// Each tool keys its cache by what decides its answer: ESLint by each file's content
// (`--cache-strategy content`) together with the tool's version and configuration;
// the type check (`tsc --incremental`) by each file's content and the compiler's options, and
// it checks again every file that depends on a changed one. A stale entry is never used; a
// missing or unreadable cache costs a whole check, nothing else.
//
// ESLint names the files in its cache by absolute path, so a cache written in another clone is
// moved to this one (its folder's name replaced) before ESLint reads it. The tool works on a
// copy under node_modules/.cache; the copy goes back to the shared folder (written whole, then
// renamed) when the tool has finished. Prettier's check has a cache of its own
// (scripts/prettier-check.mjs).
// `EPICFLOW_CHECKS_CACHE=off` runs the tool without a cache.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules/.bin', name);

/** Each check: its command, and the flags that point it at a cache file. */
const CHECKS = {
  eslint: {
    argv: [bin('eslint'), '.'],
    cached: (file) => ['--cache', '--cache-strategy', 'content', '--cache-location', file],
  },
  typecheck: {
    argv: [bin('tsc'), '-p', 'tsconfig.json', '--noEmit'],
    // The build info names files relative to itself: under this clone, it reads the same in any.
    cached: (file) => ['--incremental', '--tsBuildInfoFile', file],
  },
};

/** The tests' cache folder (test/support/cache-dir.ts): `$EPICFLOW_TEST_CACHE` or `~/.cache/epicflow`. */
export function sharedFolder() {
  const base =
    process.env['EPICFLOW_TEST_CACHE'] ??
    join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'epicflow');
  return join(base, 'checks');
}

/** A file's text, or null when it cannot be read. */
function readOrNull(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** `text` with every path under `from` moved under `to` (both as JSON writes them). */
export function relocate(text, from, to) {
  if (from === to) return text;
  const inJson = (p) => JSON.stringify(`${p}/`).slice(1, -1);
  return text.replaceAll(`"${inJson(from)}`, `"${inJson(to)}`);
}

/** Copies the shared cache of `name` into this clone's `file`; false when there is none to use. */
function bringIn(name, shared, file) {
  const kept = readOrNull(join(shared, `${name}.json`));
  if (kept === null) return false;
  try {
    const { root: from, cache } = JSON.parse(kept);
    const moved = relocate(cache, from, root);
    JSON.parse(moved); // every tool here writes JSON; an unreadable copy is not handed on
    writeFileSync(file, moved);
    return true;
  } catch {
    return false;
  }
}

/** Puts this clone's `file` back as the shared cache of `name`: whole, with the clone it names. */
function putBack(name, shared, file) {
  const cache = readOrNull(file);
  if (cache === null) return;
  mkdirSync(shared, { recursive: true });
  const temp = join(shared, `${name}.json.${process.pid}.tmp`);
  writeFileSync(temp, JSON.stringify({ root, cache }));
  renameSync(temp, join(shared, `${name}.json`));
}

function main(name) {
  const check = CHECKS[name];
  if (check === undefined) {
    process.stderr.write(
      `cached-check: unknown check "${name}" (expected one of ${Object.keys(CHECKS).join(', ')})\n`,
    );
    return 2;
  }
  const useCache = process.env['EPICFLOW_CHECKS_CACHE'] !== 'off';
  const local = join(root, 'node_modules/.cache/epicflow-checks');
  const file = join(local, `${name}.cache`);
  const shared = sharedFolder();
  if (useCache) {
    mkdirSync(local, { recursive: true });
    rmSync(file, { force: true });
    bringIn(name, shared, file);
  }
  const [command, ...args] = check.argv;
  const extra = process.argv.slice(3);
  const r = spawnSync(command, [...args, ...extra, ...(useCache ? check.cached(file) : [])], {
    cwd: root,
    stdio: 'inherit',
  });
  if (r.error !== undefined) {
    process.stderr.write(`cached-check: cannot start ${command}: ${r.error.message}\n`);
    return 1;
  }
  if (useCache) {
    try {
      putBack(name, shared, file);
    } catch (e) {
      // The check's answer stands; only the next run's head start is lost.
      process.stderr.write(`cached-check: cache not kept in ${shared}: ${e.message}\n`);
    }
  }
  return r.status ?? 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(main(process.argv[2]));
