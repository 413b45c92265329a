// `npm test`: the checks (eslint, prettier, knip, the type check) and jest, at once. The
// checks run at the lowest priority (`nice -n 19`), so they take what jest leaves of the
// CPU (its start, its global setup, the last files of its run) rather than slowing its
// workers; their output is shown when jest ends, a failed check's in full. Arguments go to
// jest (`npm test -- test/engine/basic.test.ts`). The exit code is jest's, or 1 when a check
// failed. docs/testing.md, "Running the tests".
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const CHECKS = ['lint:eslint', 'lint:prettier', 'lint:knip', 'typecheck'];
const npm = process.env['npm_execpath'];

/** A process's exit code, or what a shell says for one a signal ended. */
const codeOf = (code, signal) => code ?? (signal === null ? 1 : 128);

/** Runs `npm run <script>` at the lowest priority, its output kept. */
function check(script) {
  const started = Date.now();
  const argv =
    npm === undefined
      ? ['npm', 'run', '--silent', script]
      : [process.execPath, npm, 'run', '--silent', script];
  const child = spawn('nice', ['-n', '19', ...argv], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = [];
  child.stdout.on('data', (b) => output.push(b));
  child.stderr.on('data', (b) => output.push(b));
  const done = new Promise((resolve) => {
    child.on('error', (e) => resolve({ script, code: 1, output: `${e.message}\n`, seconds: 0 }));
    child.on('close', (code, signal) =>
      resolve({
        script,
        code: codeOf(code, signal),
        output: Buffer.concat(output).toString('utf8'),
        seconds: (Date.now() - started) / 1000,
      }),
    );
  });
  return { child, done };
}

const checks = CHECKS.map(check);
const jest = spawn(
  process.execPath,
  [
    '--experimental-vm-modules',
    join(root, 'node_modules/jest/bin/jest.js'),
    ...process.argv.slice(2),
  ],
  { cwd: root, stdio: 'inherit' },
);
const children = [jest, ...checks.map((c) => c.child)];
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    for (const c of children) if (c.exitCode === null) c.kill(signal);
  });
}

const jestCode = await new Promise((resolve) => {
  jest.on('error', () => resolve(1));
  jest.on('close', (code, signal) => resolve(codeOf(code, signal)));
});
const results = await Promise.all(checks.map((c) => c.done));
let failed = false;
for (const r of results) {
  if (r.code === 0) {
    process.stdout.write(`[${r.script}] passed (${r.seconds.toFixed(0)} s)\n`);
  } else {
    failed = true;
    process.stdout.write(`[${r.script}] failed (exit ${r.code}):\n${r.output}\n`);
  }
}
process.exit(jestCode !== 0 ? jestCode : failed ? 1 : 0);
