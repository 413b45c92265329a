/**
 * Ends every process a turn left behind. Agent CLIs run their tools in new
 * sessions or process groups (Claude Code's Bash tool does), so killing the
 * CLI's process group does not reach a background process an agent started.
 * Each turn's environment carries a unique marker; every descendant inherits
 * it, orphaned or not, so after the turn we kill whatever still carries it.
 * Linux only (/proc); elsewhere the process-group kill is all we do.
 */
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';

export const RUN_MARKER = 'EPICFLOW_RUN_ID';

async function markedPids(value: string): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const needle = Buffer.from(`${RUN_MARKER}=${value}\0`);
  const pids: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const environ = await readFile(`/proc/${entry}/environ`);
      const at = environ.indexOf(needle);
      // A whole variable: at the start or right after the previous one's NUL.
      if (at === 0 || (at > 0 && environ[at - 1] === 0)) pids.push(pid);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

/** Whether a process still runs: it exists and is not a zombie (dead, waiting to be reaped). */
async function running(pid: number): Promise<boolean> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const state = /^State:\s+(\S)/m.exec(status)?.[1];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/**
 * Kills every process whose environment carries this turn's marker, and returns once
 * they are dead (a killed process ends when the kernel next schedules it); their pids.
 */
export async function reapMarked(value: string): Promise<number[]> {
  const killed = new Set<number>();
  // A process may fork between the scan and the kill: scan again until none is left.
  for (let round = 0; round < 5; round++) {
    const pids = await markedPids(value);
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
    const left = (
      await Promise.all([...killed].map(async (p) => ((await running(p)) ? p : 0)))
    ).filter((p) => p !== 0);
    if (left.length === 0) break;
    await delay(10);
  }
  return [...killed];
}
