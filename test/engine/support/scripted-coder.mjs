// A scripted stand-in for a coding agent, driven by a JSON script:
// { "<story>": { "<round>": step, "*": step }, "*": { ... } } where a step is
// { write?: {path: text}, remove?: [path], symlink?: {path: target}, sh?: [cmd],
//   stdout?: text, exit?: number }. Round "*" applies to any round not listed.
import { execSync } from 'node:child_process';
import {
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import { dirname } from 'node:path';

const script = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const story = process.env.EPICFLOW_STORY;
const round = process.env.EPICFLOW_ROUND;
const log = process.argv[3];
if (log) {
  const prompt = readFileSync(process.env.EPICFLOW_PROMPT_FILE, 'utf8');
  appendFileSync(log, `${JSON.stringify({ story, round, prompt })}\n`);
}
const forStory = script[story] ?? script['*'] ?? {};
const step = forStory[round] ?? forStory['*'] ?? {};
for (const [path, text] of Object.entries(step.write ?? {})) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
for (const path of step.remove ?? []) rmSync(path, { recursive: true, force: true });
for (const [path, target] of Object.entries(step.symlink ?? {})) {
  mkdirSync(dirname(path), { recursive: true });
  rmSync(path, { force: true });
  symlinkSync(target, path);
}
for (const cmd of step.sh ?? []) execSync(cmd, { stdio: 'inherit', shell: '/bin/sh' });
if (step.stdout) process.stdout.write(step.stdout);
process.exit(step.exit ?? 0);
