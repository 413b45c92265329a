/**
 * The double's process starter (see spawner.ts): a small Node process that runs the
 * commands it is sent and answers with their exit code and output. It exits when its
 * parent goes away.
 */
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';

process.on('disconnect', () => process.exit(0));

process.on('message', (/** @type {any} */ m) => {
  /** @param {object} answer */
  const reply = (answer) => process.send?.({ id: m.id, ...answer });
  let child;
  try {
    child = spawn(m.command, m.args, {
      cwd: m.cwd,
      env: m.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  } catch (error) {
    reply({ error: String(error) });
    return;
  }
  /** @type {Buffer[]} */
  const out = [];
  /** @type {Buffer[]} */
  const err = [];
  child.stdout.on('data', (d) => out.push(d));
  child.stderr.on('data', (d) => err.push(d));
  // The command may exit before reading its input (a failed rev-parse): not an error here.
  child.stdin.on('error', () => undefined);
  child.on('error', (error) => reply({ error: String(error) }));
  child.on('close', (code) =>
    reply({ code: code ?? 1, stdout: Buffer.concat(out), stderr: Buffer.concat(err) }),
  );
  child.stdin.end(m.input === undefined ? '' : Buffer.from(m.input));
});
