/**
 * The end of a sandboxed step's PID namespace, awaited after a kill. A step that ends by
 * itself has ended everything it started when bubblewrap exits (its first process is pid 1
 * of the namespace, which the kernel lets exit only once every other process is gone:
 * `core/sandbox.ts`). A step that is killed (its timeout, an abort) is not: its bubblewrap
 * dies first, the namespace a moment later (`--die-with-parent`). `namespaceWatch` finds the
 * namespace's pid 1 among the descendants of the process epicflow started, before that is
 * signalled, and then waits until it is gone.
 *
 * Everything is read from `/proc/<pid>/status`, `stat` and `task/*\/children`, which any
 * user may read: this works where the step runs as another user through `sudo`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { EpicflowError } from '../../core/errors.js';

/** A namespace's init: its pid as this process sees it, and when it started (pids are reused). */
interface NamespaceInit {
  readonly pid: number;
  readonly started: string;
}

/** How many PID namespaces deep a process is (`NSpid` lists its pid in each), or null when it is gone. */
function depth(pid: number | 'self'): number | null {
  try {
    const line = /^NSpid:\s+(.+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return line === undefined ? null : line.trim().split(/\s+/).length;
  } catch {
    return null;
  }
}

/** Its state letter and start time (fields 3 and 22 of `stat`, after the command's parentheses). */
function parseStat(text: string): { state: string; started: string } | null {
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const started = fields[19];
  return state === undefined || started === undefined ? null : { state, started };
}

function children(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const list = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
      for (const c of list.split(' ')) if (c.trim() !== '') out.push(Number(c));
    }
  } catch {
    // gone meanwhile
  }
  return out;
}

/**
 * The init of the first PID namespace below this process's among `pid` and its
 * descendants (bubblewrap's child, behind a `sudo` or two); null when there is none (the
 * step has not made it yet, or it is over). Synchronous: it must be read before the
 * process is signalled, after which the init is no longer its child.
 */
function initOf(pid: number): NamespaceInit | null {
  const ours = depth('self');
  if (ours === null) return null;
  let level = [pid];
  for (let hops = 0; hops < 4 && level.length > 0; hops++) {
    for (const p of level) {
      if (depth(p) !== ours + 1) continue;
      try {
        const stat = parseStat(readFileSync(`/proc/${p}/stat`, 'utf8'));
        if (stat !== null) return { pid: p, started: stat.started };
      } catch {
        // gone meanwhile: its namespace is over
      }
    }
    level = level.flatMap(children);
  }
  return null;
}

/** Whether the init is gone: no such process, another process with its pid, or dead. */
async function ended(init: NamespaceInit): Promise<boolean> {
  try {
    const stat = parseStat(await readFile(`/proc/${init.pid}/stat`, 'utf8'));
    // A zombie init has ended its namespace: the kernel ends every other process first.
    return (
      stat === null || stat.started !== init.started || stat.state === 'Z' || stat.state === 'X'
    );
  } catch {
    return true;
  }
}

/** Waits until the namespace of `init` has no process left; throws `isolation` past `timeoutMs`. */
async function namespaceEnded(init: NamespaceInit, timeoutMs = 30_000): Promise<void> {
  const until = performance.now() + timeoutMs;
  for (let round = 0; !(await ended(init)); round++) {
    if (performance.now() > until) {
      throw new EpicflowError(
        'isolation',
        `the processes of a killed step did not end within ${String(timeoutMs / 1000)} s (its namespace's first process, ${String(init.pid)}, still runs)`,
      );
    }
    await delay(round < 20 ? 5 : 50);
  }
}

/** For one sandboxed step: what a kill of it needs (see `namespaceWatch`). */
export interface NamespaceWatch {
  /** For `runProcess`: finds the namespace's pid 1 before a timeout or an abort signals the step. */
  readonly beforeKill: (pid: number) => void;
  /**
   * The namespace's pid 1: found by `beforeKill`, or looked for again (a step killed as it
   * started may have made it since); null when no kill was asked for.
   */
  readonly found: () => NamespaceInit | null;
  /** Waits until the namespace of a killed step has ended; at once for one that ended by itself. */
  readonly settled: () => Promise<void>;
}

/** A watch for one sandboxed step (the sandbox gives one with each step). */
export function namespaceWatch(): NamespaceWatch {
  let started: number | undefined;
  let init: NamespaceInit | null = null;
  const found = (): NamespaceInit | null => {
    if (init === null && started !== undefined) init = initOf(started);
    return init;
  };
  return {
    beforeKill: (pid) => {
      started ??= pid;
      found();
    },
    found,
    // Only what was found while the step ran: its pid may be another process's by now.
    settled: () => (init === null ? Promise.resolve() : namespaceEnded(init)),
  };
}
