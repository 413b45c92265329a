/**
 * Setup and gates as shell commands: the repository's own checks, which run the
 * code an agent wrote, so they are untrusted code — run through `Untrusted` (as
 * the agent user when isolated, with its own home), with the base environment
 * (no tokens). Every process a gate started is ended after it.
 */
import { join } from 'node:path';
import { GateDigest } from '../../core/gates/index.js';
import type { GateRunner } from '../../engine/ports.js';
import { baseEnv } from './run-process.js';
import { sameUser, type Untrusted } from './untrusted.js';

export function shellGates(env: NodeJS.ProcessEnv, untrusted: Untrusted = sameUser()): GateRunner {
  const childEnv = baseEnv(env);
  return {
    async run(command, { cwd, dir = '.', timeoutMs, signal, onLine, story }) {
      // What decisions rest on (failure lines, the pass count) is read from every line as
      // it streams; the text kept for people (the coder's feedback, the report) is the
      // tail, which says so in its first line when cut.
      const digest = new GateDigest(cwd);
      const r = await untrusted.runShell(command, {
        // A package's command starts in its folder; the checkout is handed over whole
        // (a folder inside a tree an agent wrote is never handed over by itself).
        cwd: dir === '.' ? cwd : join(cwd, dir),
        ...(dir === '.' ? {} : { writable: [cwd] }),
        env: childEnv,
        // As the agent user, gates get its home (npm's cache, tools' settings): never ours.
        ownHome: true,
        ...(story === undefined ? {} : { seat: { scope: story, role: 'checks' } }),
        timeoutMs,
        maxCaptureBytes: 256 * 1024,
        onLine: (_stream, line) => {
          digest.push(line);
          onLine?.(line);
        },
        ...(signal === undefined ? {} : { signal }),
      });
      const output = [r.stdout, r.stderr, r.spawnError?.message ?? '']
        .filter((s) => s !== '')
        .join('\n');
      return {
        command,
        ok: r.exitCode === 0 && !r.timedOut && !r.aborted,
        output: r.timedOut ? `${output}\ntimed out after ${Math.round(timeoutMs / 1000)}s` : output,
        ...(r.timedOut ? { timedOut: true } : {}),
        passCount: digest.passCount,
        failures: digest.failures,
        ...(digest.lineKeys === undefined ? {} : { lineKeys: digest.lineKeys }),
      };
    },
  };
}
