// A scripted coding agent for the end-to-end epic. argv: <state dir> <executor id>.
// What it does depends on the story (EPICFLOW_STORY), so one epic shows every path:
//   retry    fails its first attempt (a marker in the state dir, outside the worktree)
//   handover executor "a" is out of quota (exit 75); executor "b" does the work
//   slow     tells the test it is coding (a file in the state dir), then takes its time
//   cancelled the same, with a file of its own
//   silent   its first turn prints nothing and takes its time (the stall guard's case)
//   claims   says it verified `npm test` (a command agent's claims cannot be checked)
// Every other story writes its module. The state dir is outside every worktree; each turn
// leaves a file `turn-<story>-…` there.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';

const [state, executor] = process.argv.slice(2);
const story = process.env.EPICFLOW_STORY;
mkdirSync(state, { recursive: true });
// Every turn leaves a file of its own (agents of other users may share the folder), for
// tests that count what was paid for.
writeFileSync(`${state}/turn-${story}-${executor}-${process.pid}-${Date.now()}`, '');

if (story === 'handover' && executor === 'a') {
  console.error('You have hit your usage limit.');
  process.exit(75);
}
if (story === 'retry' && !existsSync(`${state}/retry-attempted`)) {
  writeFileSync(`${state}/retry-attempted`, '');
  console.error('the agent crashed');
  process.exit(1);
}
if (story === 'silent' && !existsSync(`${state}/silent-attempted`)) {
  writeFileSync(`${state}/silent-attempted`, '');
  // Prints nothing and waits: the stall guard stops it (a minute is a bound, not a wait).
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
}
if ((story === 'slow' || story === 'cancelled') && !existsSync(`${state}/${story}-started`)) {
  writeFileSync(`${state}/${story}-started`, String(process.pid));
  // The test kills or cancels the job meanwhile; a minute is a bound, not a wait.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
}
mkdirSync(`src/${story}`, { recursive: true });
writeFileSync(`src/${story}/index.js`, `export const story = ${JSON.stringify(story)};\n`);
console.log(`EPICFLOW_USAGE {"input":1000,"output":200,"model":"scripted-${executor}"}`);
if (story === 'claims') console.log('Done.\nverified: npm test');
