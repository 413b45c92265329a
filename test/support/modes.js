/**
 * Modes: what a test file needs of the machine beyond Node and git, declared in the file's
 * first comment with one `@needs` line (docs/testing.md, "Modes"):
 *
 *     /**
 *      * …what the file tests…
 *      *
 *      * @needs root sudo
 *      *\/
 *
 * - `root`: the tests run as root (they make users: agent users, runner users);
 * - `sudo`: `sudo` is installed (the tests make a runner user with passwordless sudo, so a
 *           file that needs sudo needs root too: `@needs root sudo`);
 * - `cron`: `crontab` is installed (package cron);
 * - `at`:   `at` is installed (package at);
 * - `sandbox`: bubblewrap is installed (package bubblewrap) and the kernel lets an
 *           unprivileged user make user namespaces (the kernel sandbox; no root needed);
 * - `acl`:  `setfacl` is installed (package acl: agent users are let through closed folders
 *           by an ACL entry of their own);
 * - `pytest`: `python3 -m pytest` works (package python3-pytest; as root, with the system's own
 *           PATH too: the gates run as the agent user, which cannot enter root's home);
 * - `go`:   `go` is installed (package golang-go).
 *
 * The sequencer (test/support/sequencer.js) leaves out the files that need a mode this machine
 * lacks, and the reporter (test/support/modes-reporter.js) says once, at the end of the run,
 * which modes did not run and why, with the command that installs what is missing. With
 * `CI=true` a missing mode fails the run.
 *
 * Plain JavaScript: jest's configuration, sequencer and reporters load it without a transform.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join, relative } from 'node:path';

/** @typedef {'root' | 'sudo' | 'cron' | 'at' | 'sandbox' | 'acl' | 'pytest' | 'go'} Mode */

/** Every mode, in the order they are reported. */
export const MODES = /** @type {const} */ ([
  'root',
  'sudo',
  'cron',
  'at',
  'sandbox',
  'acl',
  'pytest',
  'go',
]);

/** The program each installable mode needs, and the Debian/Ubuntu package that has it. */
const PROGRAMS = {
  sudo: { program: 'sudo', pkg: 'sudo' },
  cron: { program: 'crontab', pkg: 'cron' },
  at: { program: 'at', pkg: 'at' },
  sandbox: { program: 'bwrap', pkg: 'bubblewrap' },
  acl: { program: 'setfacl', pkg: 'acl' },
  go: { program: 'go', pkg: 'golang-go' },
  pytest: { program: 'python3', pkg: 'python3-pytest' },
};

/** The system's own PATH, which the agent user's gates find their tools on. */
const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * What `pytestWorks` found, by PATH, handed down in the environment: the sequencer asks in
 * jest's own process before any worker starts, and every worker (a test file's `@needs`
 * check) inherits the answers instead of starting Python twice per file.
 */
const PYTEST_ANSWERS = 'EPICFLOW_TEST_PYTEST_WORKS';

/** Whether `python3 -m pytest` works on `path` (a process: asked once per PATH and run). */
function pytestWorks(path) {
  /** @type {Record<string, boolean>} */
  let answers = {};
  try {
    answers = JSON.parse(process.env[PYTEST_ANSWERS] ?? '{}');
  } catch {
    // not ours, or cut: asked again
  }
  let works = answers[path];
  if (typeof works !== 'boolean') {
    const r = spawnSync('python3', ['-m', 'pytest', '--version'], {
      env: { PATH: path },
      stdio: 'ignore',
      timeout: 30_000,
    });
    works = r.status === 0;
    process.env[PYTEST_ANSWERS] = JSON.stringify({ ...answers, [path]: works });
  }
  return works;
}

/** Why the kernel refuses unprivileged user namespaces, or undefined when it allows them. */
function usernsRefused() {
  const read = (f) => {
    try {
      return readFileSync(f, 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  if (read('/proc/sys/user/max_user_namespaces') === '0') return 'user.max_user_namespaces is 0';
  if (read('/proc/sys/kernel/unprivileged_userns_clone') === '0') {
    return 'kernel.unprivileged_userns_clone is 0';
  }
  if (read('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') === '1') {
    return 'kernel.apparmor_restrict_unprivileged_userns is 1';
  }
  return undefined;
}

/** Whether `program` is an executable file on `path` (no process started). */
function onPath(program, path) {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(join(dir, program), constants.X_OK);
      return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

/**
 * What this machine lacks, by mode: a map from each missing mode to why it is missing, and
 * the packages to install (`packages`). `env` and `uid` are the process's own unless given.
 *
 * @param {{ env?: NodeJS.ProcessEnv, uid?: number }} [of]
 * @returns {{ missing: Map<Mode, string>, packages: string[] }}
 */
export function detectModes(of = {}) {
  const env = of.env ?? process.env;
  const uid = of.uid ?? (typeof process.getuid === 'function' ? process.getuid() : -1);
  /** @type {Map<Mode, string>} */
  const missing = new Map();
  const packages = [];
  const root = uid === 0;
  if (!root) missing.set('root', uid < 0 ? 'not a POSIX system' : `not root (uid ${uid})`);
  for (const mode of /** @type {const} */ (['sudo', 'cron', 'at', 'sandbox', 'acl', 'go'])) {
    const { program, pkg } = PROGRAMS[mode];
    if (onPath(program, env['PATH'])) continue;
    packages.push(pkg);
    missing.set(mode, `${program} is not installed (package ${pkg})`);
  }
  const pytestPaths = root ? [env['PATH'] ?? '', SYSTEM_PATH] : [env['PATH'] ?? ''];
  const noPytest = pytestPaths.find((path) => !pytestWorks(path));
  if (noPytest !== undefined) {
    packages.push(PROGRAMS.pytest.pkg);
    missing.set(
      'pytest',
      `python3 -m pytest does not work${noPytest === SYSTEM_PATH && pytestPaths.length > 1 ? ` on the system's PATH (${SYSTEM_PATH}), where the agent user's gates run` : ''} (package python3-pytest)`,
    );
  }
  const refused = missing.has('sandbox') ? undefined : usernsRefused();
  if (refused !== undefined) {
    missing.set('sandbox', `the kernel refuses user namespaces to unprivileged users (${refused})`);
  }
  return { missing, packages };
}

/** The one command that installs `packages`, as this user on this machine. */
export function installCommand(packages, of = {}) {
  if (packages.length === 0) return undefined;
  const env = of.env ?? process.env;
  const uid = of.uid ?? (typeof process.getuid === 'function' ? process.getuid() : -1);
  if (!onPath('apt-get', env['PATH'])) return `install the packages ${packages.join(' ')}`;
  return `${uid === 0 ? '' : 'sudo '}apt-get install -y ${packages.join(' ')}`;
}

/**
 * The modes a test file declares in its first comment (`@needs root sudo`); an unknown
 * mode is an error naming the file, so a typo never lets a file run where it cannot.
 *
 * @param {string} text the file's source
 * @param {string} file its path, for the error
 * @returns {Mode[]}
 */
export function declaredModes(text, file) {
  const first = /^\s*(?:#![^\n]*\n\s*)?\/\*\*?([\s\S]*?)\*\//.exec(text);
  if (first === null) return [];
  const line = /^\s*\*?\s*@needs\b(.*)$/m.exec(first[1] ?? '');
  if (line === null) return [];
  const modes = (line[1] ?? '').trim().split(/\s+/).filter(Boolean);
  const unknown = modes.filter((m) => !MODES.includes(/** @type {Mode} */ (m)));
  if (modes.length === 0 || unknown.length > 0)
    throw new Error(
      `${file}: @needs names ${unknown.length > 0 ? `unknown modes ${unknown.join(', ')}` : 'no mode'}; ` +
        `the modes are ${MODES.join(', ')}`,
    );
  return /** @type {Mode[]} */ (modes);
}

/** The modes the test file at `path` declares (none when there is no such file). */
export function modesOfFile(path) {
  let text;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if (/** @type {NodeJS.ErrnoException} */ (e).code === 'ENOENT') return [];
    throw e;
  }
  return declaredModes(text.slice(0, 8192), path);
}

/** Whether the run is CI's: there a missing mode is a failure, never a silent skip. */
export function inCI(env = process.env) {
  const ci = (env['CI'] ?? '').toLowerCase();
  return ci !== '' && ci !== 'false' && ci !== '0';
}

/**
 * The test files this run leaves out, shared by the sequencer (which leaves them out) and the
 * modes reporter (which says so at the end); both run in jest's main process.
 *
 * @type {{ file: string, modes: Mode[], part?: string }[]}
 */
export const notRun = [];

/** How a part of a file that was not run is recorded: the title of a `todo` test. */
const NOT_RUN_TITLE = /^not run, needs ([a-z ]+): /;

/** The title of the `todo` test that stands for a part not run (test/support/needs.ts). */
export function notRunTitle(modes, missing) {
  const why = modes.filter((m) => missing.has(m)).map((m) => missing.get(m));
  return `not run, needs ${modes.join(' ')}: ${why.join('; ')}`;
}

/** The modes a `todo` test's title says its part needed, or undefined for any other todo. */
export function modesOfNotRunTitle(title) {
  const m = NOT_RUN_TITLE.exec(title);
  return m === null ? undefined : /** @type {Mode[]} */ ((m[1] ?? '').split(' '));
}

/**
 * What the end of a run says about the files left out: one line per missing mode with its
 * reason and the files that needed it, and the command that installs what is missing.
 *
 * @param {{ file: string, modes: Mode[] }[]} files
 * @param {{ missing: Map<Mode, string>, packages: string[] }} detected
 * @param {{ env?: NodeJS.ProcessEnv, uid?: number, rootDir?: string }} [of]
 */
export function notRunReport(files, detected, of = {}) {
  const lines = [];
  const packages = new Set();
  for (const mode of MODES) {
    const why = detected.missing.get(mode);
    if (why === undefined) continue;
    const needing = files.filter((f) => f.modes.includes(mode));
    if (needing.length === 0) continue;
    const names = needing.map(
      (f) => `${of.rootDir ? relative(of.rootDir, f.file) : f.file}${f.part ? ` (${f.part})` : ''}`,
    );
    lines.push(`  ${mode}: ${why} — ${names.join(', ')}`);
    const pkg = PROGRAMS[/** @type {'sudo'} */ (mode)]?.pkg;
    if (pkg !== undefined && detected.packages.includes(pkg)) packages.add(pkg);
  }
  const install = installCommand([...packages], of);
  return [
    `Not run: modes this machine lacks, and the tests that need them (docs/testing.md, "Modes"):`,
    ...lines,
    ...(install === undefined ? [] : [`  to install what is missing: ${install}`]),
    ...(inCI(of.env)
      ? ['CI=true: in CI every test must run, so a missing mode fails the run.']
      : []),
  ].join('\n');
}
