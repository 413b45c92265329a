/**
 * jest run in a child process on fixture test files, with the suite's own sequencer and
 * reporters (test/support/*.js), for the tests of modes and budgets. The fixtures are plain
 * CommonJS (`*.test.cjs`), so the child needs no transform.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const SUPPORT = ['sequencer.js', 'modes.js', 'modes-reporter.js', 'budgets.js'];

export interface JestRun {
  readonly code: number;
  readonly output: string;
}

/** Where the suite's sequencer and reporters are for a child run in `dir`. */
function support(dir: string | undefined, file: string): string {
  return join(dir === undefined ? join(ROOT, 'test', 'support') : join(dir, 'support'), file);
}

/**
 * A jest configuration for `dir` with one project per entry of `projects` (its name and the
 * fixture files it runs), the suite's sequencer, modes reporter and budget reporter.
 */
export function fixtureConfig(
  dir: string,
  projects: Record<string, string[]>,
  budgets: { projects: Record<string, number>; referenceMs: number },
  own = false,
): object {
  const at = own ? dir : undefined;
  return {
    rootDir: dir,
    cacheDirectory: join(dir, 'jest-cache'),
    projects: Object.entries(projects).map(([name, files]) => ({
      displayName: name,
      rootDir: dir,
      testMatch: files.map((f) => join(dir, f)),
      transform: {},
    })),
    testSequencer: support(at, 'sequencer.js'),
    reporters: [
      'default',
      support(at, 'modes-reporter.js'),
      [support(at, 'budgets.js'), { files: {}, ...budgets }],
    ],
  };
}

/** The packages jest needs to run, by their folder under the project's `node_modules`. */
async function jestPackages(): Promise<string[]> {
  const seen = new Set<string>();
  const walk = async (dir: string): Promise<void> => {
    let pkg: {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    try {
      pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as typeof pkg;
    } catch {
      return; // an optional dependency not installed here
    }
    if (seen.has(dir)) return;
    seen.add(dir);
    for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) {
      // node's lookup: the package's own node_modules, then each folder above it.
      for (let d = dir; !relative(ROOT, d).startsWith('..'); d = dirname(d)) {
        const p = join(d, 'node_modules', dep);
        try {
          await readFile(join(p, 'package.json'));
          await walk(p);
          break;
        } catch {
          // not here: one folder up
        }
        if (d === ROOT) break;
      }
    }
  };
  await walk(join(ROOT, 'node_modules', 'jest'));
  await walk(join(ROOT, 'node_modules', '@jest', 'test-sequencer'));
  return [...seen];
}

/**
 * Copies what a child jest needs into `dir` (jest's packages under `node_modules`, the
 * suite's sequencer and reporters under `support`), so that a user who cannot read the
 * project's checkout can run it there.
 */
export async function copyJest(dir: string): Promise<void> {
  for (const pkg of await jestPackages())
    await cp(pkg, join(dir, relative(ROOT, pkg)), { recursive: true, dereference: false });
  await mkdir(join(dir, 'support'), { recursive: true });
  for (const f of SUPPORT) await cp(join(ROOT, 'test', 'support', f), join(dir, 'support', f));
}

/**
 * `jest --config <config>` in `dir`, with `env` (and PATH, HOME as given there); as `user`
 * when given (the test runs as root), with jest from `dir` (see `copyJest`).
 */
export async function runJest(
  dir: string,
  config: object,
  env: NodeJS.ProcessEnv,
  user?: { uid: number; gid: number },
): Promise<JestRun> {
  const file = join(dir, 'jest.config.json');
  await writeFile(file, JSON.stringify(config));
  const jest = join(user === undefined ? ROOT : dir, 'node_modules', 'jest', 'bin', 'jest.js');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [jest, '--config', file],
      {
        cwd: dir,
        env,
        maxBuffer: 16 << 20,
        ...(user === undefined ? {} : { uid: user.uid, gid: user.gid }),
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}
