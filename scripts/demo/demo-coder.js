#!/usr/bin/env node
/**
 * SCRIPTED DEMO CODER — a stand-in for an AI coding agent, for `npm run demo`.
 * It does not think: it writes canned code for each story of the demo epic
 * (scripts/demo/canned-stories.js), following epicflow's `command` harness
 * contract: the prompt on stdin and in EPICFLOW_PROMPT_FILE, the story in
 * EPICFLOW_STORY, the round in EPICFLOW_ROUND, usage on an EPICFLOW_USAGE line.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { CANNED } from './canned-stories.js';

const story = process.env.EPICFLOW_STORY ?? '';
const round = Number(process.env.EPICFLOW_ROUND ?? '1');
const prompt = readFileSync(process.env.EPICFLOW_PROMPT_FILE ?? '/dev/null', 'utf8');
const make = CANNED[story];
if (make === undefined) {
  process.stdout.write(`the demo coder has no canned code for story ${story}\n`);
  process.exit(1);
}
let written = 0;
for (const [path, text] of Object.entries(make(round, prompt))) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  written += text.length;
}
process.stdout.write(`wrote ${story} (round ${round})\n`);
const usage = {
  input: Math.ceil(prompt.length / 4),
  output: Math.ceil(written / 4),
  model: 'demo-model',
};
process.stdout.write(`EPICFLOW_USAGE ${JSON.stringify(usage)}\n`);
