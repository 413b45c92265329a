/**
 * Searching a job for credentials from outside it, as root: every process that descends from
 * the job's process, read while it runs (`/proc/<pid>/environ` and `cmdline`), and every file
 * under its folders after it (test/action/work-publish.test.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Every process that descends from `root`, by the kernel's own table. */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(entry), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  for (const pid of parent.keys()) {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = parent.get(p)) {
      if (p === root) {
        out.push(pid);
        break;
      }
    }
  }
  return out;
}

/**
 * Searches every process of a job, as long as it runs, for `secrets` in its environment
 * and command line. Returns what it found and how many processes it read.
 */
export function watch(secrets: () => readonly string[]): {
  readonly onSpawn: (child: ChildProcess) => void;
  readonly result: () => Promise<{ readonly read: number; readonly found: string[] }>;
} {
  let done: Promise<void> = Promise.resolve();
  let read = 0;
  const found = new Set<string>();
  return {
    onSpawn: (child) => {
      const pid = child.pid;
      if (pid === undefined) return;
      let running = true;
      child.on('close', () => (running = false));
      done = (async () => {
        const seen = new Set<number>();
        while (running) {
          for (const p of [pid, ...descendants(pid)]) {
            let text = '';
            try {
              text = `${readFileSync(`/proc/${p}/environ`, 'latin1')}\n${readFileSync(`/proc/${p}/cmdline`, 'latin1')}`;
            } catch {
              continue;
            }
            if (!seen.has(p)) read += 1;
            seen.add(p);
            for (const s of secrets()) if (s !== '' && text.includes(s)) found.add(s);
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
    },
    result: async () => {
      await done;
      return { read, found: [...found] };
    },
  };
}

/** Every file under `dir` holding one of `secrets` (its path). */
export async function filesHolding(dir: string, secrets: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(d, e.name);
      if (e.isDirectory()) await walk(path);
      else if (e.isFile()) {
        const text = await readFile(path, 'latin1').catch(() => '');
        if (secrets.some((s) => s !== '' && text.includes(s))) out.push(path);
      }
    }
  };
  await walk(dir);
  return out;
}
