// A scripted coding agent for a story run as a task plan. argv: <dump dir>.
// Its planning turn answers three tasks; the turn of task k writes the story's module and
// `src/<story>/task-<k>.js` and ends with its findings. The first turn of task 2 tells the
// test it started (a file `<story>-task2-held` holding its pid) and takes its time: the test
// kills the job meanwhile. Every turn leaves a file `turn-<story>-<time>-<pid>` holding its
// prompt, for tests that count and order what was paid for.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const [dump] = process.argv.slice(2);
const story = process.env.EPICFLOW_STORY;
const prompt = readFileSync(process.env.EPICFLOW_PROMPT_FILE, 'utf8');
mkdirSync(dump, { recursive: true });
writeFileSync(`${dump}/turn-${story}-${Date.now()}-${process.pid}`, prompt);
console.log(`EPICFLOW_USAGE {"input":1000,"output":200,"model":"scripted-tasks"}`);

if (prompt.includes('## First, plan this story as tasks')) {
  const tasks = [1, 2, 3].map((k) => ({
    title: `Part ${k}`,
    outcome: `src/${story}/task-${k}.js exists`,
    paths: [`src/${story}/task-${k}.js`, `src/${story}/index.js`],
    satisfies: [],
  }));
  console.log('```json');
  console.log(JSON.stringify({ tasks }));
  console.log('```');
  process.exit(0);
}
const k = /## Your task now: task (\d+) of \d+/.exec(prompt)?.[1];
if (k === '2' && !existsSync(`${dump}/${story}-task2-held`)) {
  writeFileSync(`${dump}/${story}-task2-held`, String(process.pid));
  // The test kills the job meanwhile; a minute is a bound, not a wait.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
}
mkdirSync(`src/${story}`, { recursive: true });
writeFileSync(`src/${story}/index.js`, `export const story = ${JSON.stringify(story)};\n`);
if (k !== undefined) writeFileSync(`src/${story}/task-${k}.js`, `export const part = ${k};\n`);
console.log(`Done.\n\n## Findings\npart ${k ?? 'all'} is in place`);
