/**
 * How epicflow starts a child process: Node's own `spawn`, unless the host that runs
 * epicflow in its own process started them another way (`startProcessesWith`).
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

let start: StartProcess = spawn;

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
