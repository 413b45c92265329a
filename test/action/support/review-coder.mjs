// A scripted coding agent for review-round tests. argv: <dump dir>.
// It keeps every prompt it is given (<dump>/<epic>-<story>-<n>.prompt.md). A first run writes
// the story's module. A run for a review round (its prompt has a "Review comments"
// section) appends a line to each owned file a comment names (or to the story's own
// module), and it obeys the comments literally: a comment asking for a workflow edit
// gets one, in .github/workflows/, which no story may change.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  appendFileSync,
  writeFileSync,
} from 'node:fs';

const [dump] = process.argv.slice(2);
const story = process.env.EPICFLOW_STORY;
const epic = process.env.EPICFLOW_EPIC;
const prompt = readFileSync(process.env.EPICFLOW_PROMPT_FILE, 'utf8');
mkdirSync(dump, { recursive: true });
const name = `${epic}-${story}-`;
const n = readdirSync(dump).filter((f) => f.startsWith(name)).length + 1;
writeFileSync(`${dump}/${name}${n}.prompt.md`, prompt);
if (!prompt.includes('## Review comments')) {
  mkdirSync(`src/${story}`, { recursive: true });
  writeFileSync(`src/${story}/index.js`, `export const story = ${JSON.stringify(story)};\n`);
} else {
  const named = [...prompt.matchAll(/^### Comment \d+, by [\w-]+, on `([^`]+)`/gm)].map(
    (m) => m[1],
  );
  const targets = named.length > 0 ? named : [`src/${story}/index.js`];
  for (const file of targets) {
    if (!existsSync(file)) continue;
    appendFileSync(file, `// revised for review by ${story}\n`);
  }
  if (/edit \.github\/workflows/i.test(prompt)) {
    mkdirSync('.github/workflows', { recursive: true });
    writeFileSync('.github/workflows/evil.yml', 'on: push\njobs: {}\n');
  }
  if (targets.every((f) => !existsSync(f))) {
    // A comment on the pull request as a whole: the first owned module takes a note.
    const owned = [...prompt.matchAll(/^- `(src\/[\w-]+)`$/gm)].map((m) => m[1]);
    for (const dir of owned) {
      if (existsSync(`${dir}/index.js`)) {
        appendFileSync(`${dir}/index.js`, `// revised for review by ${story}\n`);
        break;
      }
    }
  }
}
console.log(`EPICFLOW_USAGE {"input":1000,"output":200,"model":"scripted-review"}`);
