/**
 * How epicflow starts a child process: Node's own `spawn`, unless the host that runs
 * epicflow in its own process started them another way (`startProcessesWith`, or a starter
 * preloaded into a bundle: `PRELOADED`).
 *
 * The tests run the engine and story jobs inside large test processes, where every
 * `spawn` is a fork of the whole process first: the kernel copies page tables in
 * proportion to the parent's memory, about 8 ms of system time and 30 ms of waiting from a
 * 370 MB process against 0.4 ms and 5 ms from a small one. They start epicflow's
 * processes from a small helper process instead (test/support/process-starter.ts). The
 * processes are the same, run with the same arguments, environment, user and process
 * group; only their parent differs.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/** Starts `command` as Node's `spawn` does, with the options epicflow uses. */
export type StartProcess = (
  command: string,
  args: readonly string[],
  options: SpawnOptions,
) => ChildProcess;

/**
 * Where a host that cannot call `startProcessesWith` (a bundle such as the Action's, which
 * holds its own copy of this module) leaves its starter: a module it preloads (`node --import`)
 * puts it here before the bundle's code runs. The tests preload one that starts the Action
 * job's processes from their small helper (test/support/preload-starter.ts). Only code running
 * in this process can set it.
 */
const PRELOADED = Symbol.for('epicflow.startProcess');

let start: StartProcess =
  ((globalThis as Record<symbol, unknown>)[PRELOADED] as StartProcess | undefined) ?? spawn;

/** Starts a child process the way this process was told to (Node's `spawn` by default). */
export function startProcess(
  command: string,
  args: readonly string[],
  options: SpawnOptions,
): ChildProcess {
  return start(command, args, options);
}

/** Starts every later child process through `next`; `undefined` puts Node's `spawn` back. */
export function startProcessesWith(next: StartProcess | undefined): void {
  start = next ?? spawn;
}
