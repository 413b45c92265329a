/**
 * Ends every process a turn left behind. Agent CLIs run their tools in new
 * sessions or process groups (Claude Code's Bash tool does), so killing the
 * CLI's process group does not reach a background process an agent started.
 * Each turn's environment carries a unique marker; every descendant inherits
 * it, orphaned or not, so after the turn we kill whatever still carries it.
 * Linux only (/proc); elsewhere the process-group kill is all we do.
 */
import { readFile } from 'node:fs/promises';
import { alive, procFile, procHead, procPids } from './proc-files.js';
import { setTimeout as delay } from 'node:timers/promises';

export const RUN_MARKER = 'EPICFLOW_RUN_ID';

/** Where a step's processes begin: the pid the kernel gave last before it, and when. */
interface PidMark {
  readonly pid: number;
  readonly at: number;
}

/**
 * The pid the kernel gave last in this process's PID namespace (`/proc/loadavg`'s last
 * field), and now; undefined where it cannot be read.
 */
export async function pidMark(): Promise<PidMark | undefined> {
  const text = await readFile('/proc/loadavg', 'utf8').catch(() => '');
  const pid = Number(text.trim().split(' ').pop());
  return Number.isInteger(pid) && pid > 0 ? { pid, at: Date.now() } : undefined;
}

/**
 * Past this long a step may have had the kernel go round all pids more than once: every
 * process is looked at, not only those started since the mark.
 */
const MARK_TRUSTED_MS = 60_000;

/**
 * Whether `pid` was given after `since` and up to `last`: pids are given in increasing order,
 * going round to the lowest after the highest (`kernel.pid_max`).
 */
function givenBetween(pid: number, since: number, last: number): boolean {
  return last >= since ? pid > since && pid <= last : pid > since || pid <= last;
}

async function markedPids(value: string, since: PidMark | undefined): Promise<number[]> {
  // Only a process started since the step began can carry its marker: the others are not read.
  const last =
    since !== undefined && Date.now() - since.at < MARK_TRUSTED_MS ? await pidMark() : undefined;
  const needle = Buffer.from(`${RUN_MARKER}=${value}\0`);
  const pids: number[] = [];
  for (const pid of procPids()) {
    if (pid === process.pid) continue;
    if (since !== undefined && last !== undefined && !givenBetween(pid, since.pid, last.pid)) {
      continue;
    }
    const environ = procFile(pid, 'environ');
    if (environ === null) continue; // gone meanwhile, or not ours to read
    const at = environ.indexOf(needle);
    // A whole variable: at the start or right after the previous one's NUL.
    if (at === 0 || (at > 0 && environ[at - 1] === 0)) pids.push(pid);
  }
  return pids;
}

/** Whether a process still runs: it exists and is not a zombie (dead, waiting to be reaped). */
function running(pid: number): boolean {
  return alive(procHead(pid, 'status') ?? '');
}

/**
 * Kills every process whose environment carries this turn's marker, and returns once
 * they are dead (a killed process ends when the kernel next schedules it); their pids.
 * `since` (`pidMark()` taken before the turn started): only processes started after it are
 * read, as only they can carry the marker; without it, or after a long turn, every process.
 */
export async function reapMarked(value: string, since?: PidMark): Promise<number[]> {
  const killed = new Set<number>();
  // A process may fork between the scan and the kill: scan again until none is left.
  for (let round = 0; round < 5; round++) {
    const pids = await markedPids(value, since);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.add(pid);
      } catch {
        // already gone
      }
    }
  }
  for (let wait = 0; wait < 200; wait++) {
    const left = [...killed].filter((p) => running(p));
    if (left.length === 0) break;
    await delay(10);
  }
  return [...killed];
}
