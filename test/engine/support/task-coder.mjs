// A scripted coding agent for stories run as a task plan, driven by a JSON script:
// { "plan": [answer, …], "task": { "<k>": step }, "plain": step } where a step is
// { write?: {path: text}, stdout?: text }. A planning turn (its prompt asks for a task
// list) prints the next plan answer in order (the last one again when they run out); the
// turn of task k does task k's step ("<k>-fix" in a round fed with failing gates, when
// given); any other turn does `plain`. Each prompt is logged.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const [scriptPath, log] = process.argv.slice(2);
const script = JSON.parse(readFileSync(scriptPath, 'utf8'));
const prompt = readFileSync(process.env.EPICFLOW_PROMPT_FILE, 'utf8');
const planning = prompt.includes('## First, plan this story as tasks');
const before = existsSync(log)
  ? readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l))
  : [];
appendFileSync(
  log,
  `${JSON.stringify({ story: process.env.EPICFLOW_STORY, round: process.env.EPICFLOW_ROUND, prompt })}\n`,
);
if (planning) {
  const asked = before.filter((b) => b.prompt.includes('## First, plan this story as tasks'));
  const answers = script.plan ?? [];
  process.stdout.write(answers[Math.min(asked.length, answers.length - 1)] ?? '');
  process.exit(0);
}
const task = /## Your task now: task (\d+) of \d+/.exec(prompt)?.[1];
const fix =
  task !== undefined && prompt.includes('## The gates failed') ? `${task}-fix` : undefined;
const step =
  (task === undefined ? script.plain : (script.task?.[fix] ?? script.task?.[task])) ?? {};
for (const [path, text] of Object.entries(step.write ?? {})) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
if (step.stdout) process.stdout.write(step.stdout);
