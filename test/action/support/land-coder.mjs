// A scripted coder for landing tests. argv: <dump dir>. Stories are coder.mjs's; a
// landing (EPICFLOW_STORY=land-<n>) does what <dump dir>/land-mode says:
//   resolve  keep both sides of every conflict (ours, then theirs)
//   nothing  leave the markers where they are
//   race     resolve, then wait for <dump dir>/go (the test moves the epic branch meanwhile)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const [dump] = process.argv.slice(2);
const story = process.env.EPICFLOW_STORY ?? '';
if (!story.startsWith('land-')) {
  await import('./coder.mjs');
} else {
  const modeFile = `${dump}/land-mode`;
  const mode = existsSync(modeFile) ? readFileSync(modeFile, 'utf8').trim() : 'resolve';
  const files = execFileSync('git', ['ls-files'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  writeFileSync(`${dump}/${story}-prompt.txt`, readFileSync(0, 'utf8'));
  if (mode !== 'nothing') {
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      if (!text.includes('<<<<<<<')) continue;
      const out = [];
      let side = 'none';
      for (const line of text.split('\n')) {
        if (line.startsWith('<<<<<<<')) side = 'ours';
        else if (line.startsWith('=======') && side === 'ours') side = 'theirs';
        else if (line.startsWith('>>>>>>>')) side = 'none';
        else out.push(line);
      }
      writeFileSync(file, out.join('\n'));
    }
  }
  if (mode === 'race') {
    const deadline = Date.now() + 60_000;
    while (!existsSync(`${dump}/go`)) {
      if (Date.now() > deadline) process.exit(3);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
  console.log(`EPICFLOW_USAGE {"input":800,"output":200,"model":"scripted-1"}`);
}
