// A gate for the killed-job test, run with: node hold-gate.mjs <state dir>. On the tree of
// story "late" (its module is there), the first time only, it tells the test the gates
// are running (a file in the state dir, with its pid) and takes its time; otherwise it passes.
import { existsSync, writeFileSync } from 'node:fs';

const [state] = process.argv.slice(2);
if (existsSync('src/late') && !existsSync(`${state}/late-gating`)) {
  writeFileSync(`${state}/late-gating`, String(process.pid));
  // The test kills the job meanwhile; a minute is a bound, not a wait.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
}
