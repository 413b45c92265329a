/**
 * The tests' process starter (see process-starter.ts): a small Node process that starts
 * the processes its parent asks for, as Node's `spawn` would in the parent, and sends back
 * what they do — their pid, output, exit and close — in order. It exits when its parent
 * goes away.
 */
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';

/** The running children, by the parent's id. */
const children = new Map();

process.on('disconnect', () => process.exit(0));

process.on('message', (/** @type {any} */ m) => {
  /** @param {object} event */
  const send = (event) => process.send?.({ id: m.id, ...event });
  if (m.op === 'spawn') {
    let child;
    try {
      child = spawn(m.command, m.args, m.options);
    } catch (error) {
      send({ ev: 'error', error: described(error) });
      return;
    }
    children.set(m.id, child);
    if (child.pid !== undefined) send({ ev: 'spawn', pid: child.pid });
    child.stdout?.on('data', (chunk) => send({ ev: 'data', stream: 'stdout', chunk }));
    child.stderr?.on('data', (chunk) => send({ ev: 'data', stream: 'stderr', chunk }));
    child.stdin?.on('error', () => undefined);
    child.on('error', (error) => send({ ev: 'error', error: described(error) }));
    child.on('exit', (code, signal) => send({ ev: 'exit', code, signal }));
    child.on('close', (code, signal) => {
      children.delete(m.id);
      send({ ev: 'close', code, signal });
    });
    return;
  }
  const child = children.get(m.id);
  if (child === undefined) return;
  if (m.op === 'stdin') child.stdin?.end(m.data === undefined ? undefined : Buffer.from(m.data));
  else if (m.op === 'kill') {
    try {
      // A detached child leads its own group, as the parent's own kill would reach it.
      process.kill(m.group ? -child.pid : child.pid, m.signal);
    } catch {
      // gone meanwhile
    }
  }
});

/** @param {any} error */
function described(error) {
  return {
    message: String(error?.message ?? error),
    code: error?.code,
    errno: error?.errno,
    syscall: error?.syscall,
    path: error?.path,
  };
}
