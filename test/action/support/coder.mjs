// A scripted coding agent for story-job tests. argv: <dump dir> [barrier count].
// It records what it can see (its environment and the repository's git config),
// optionally waits until <barrier count> agents reached this point (so parallel
// jobs finish together), then writes the story's owned file.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';

const [dump, barrier] = process.argv.slice(2);
const story = process.env.EPICFLOW_STORY;
mkdirSync(dump, { recursive: true });
const gitConfig = execFileSync('git', ['config', '--list', '--show-origin'], { encoding: 'utf8' });
writeFileSync(
  `${dump}/${story}.json`,
  JSON.stringify(
    {
      env: process.env,
      gitConfig,
      cwd: process.cwd(),
      prompt: readFileSync(process.env.EPICFLOW_PROMPT_FILE, 'utf8'),
    },
    null,
    2,
  ),
);
writeFileSync(`${dump}/ready-${story}`, '');
if (barrier !== undefined) {
  const deadline = Date.now() + 60_000;
  while (readdirSync(dump).filter((f) => f.startsWith('ready-')).length < Number(barrier)) {
    if (Date.now() > deadline) process.exit(3);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
}
mkdirSync(`src/${story}`, { recursive: true });
// A story named "broken-*" writes a module the gate rejects.
const text = story.startsWith('broken')
  ? 'module.exports = {};\n'
  : `export const story = ${JSON.stringify(story)};\n`;
writeFileSync(`src/${story}/index.js`, text);
console.log(`EPICFLOW_USAGE {"input":1200,"output":300,"model":"scripted-1"}`);
if (existsSync('.git/config')) console.log('checkout has its own .git/config');
