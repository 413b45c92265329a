// A scripted agent for deferred-findings tests, as coder and as judge. argv: <dump dir> <role>.
// It keeps every prompt it is given (<dump>/<epic>-<story>-<role>-<n>.prompt.md).
//   coder  a first run writes the story's module; a follow-up round (its prompt has a
//          "Deferred findings" section) adds the comment the finding asks for.
//   judge  judges a first run with one minor finding (the story merges, the finding is
//          deferred), and clears a follow-up round.
import { appendFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';

const [dump, role] = process.argv.slice(2);
const story = process.env.EPICFLOW_STORY;
const epic = process.env.EPICFLOW_EPIC;
const prompt = readFileSync(process.env.EPICFLOW_PROMPT_FILE, 'utf8');
mkdirSync(dump, { recursive: true });
const name = `${epic}-${story}-${role}-`;
const n = readdirSync(dump).filter((f) => f.startsWith(name)).length + 1;
writeFileSync(`${dump}/${name}${n}.prompt.md`, prompt);
const module = `src/${story}/index.js`;

if (role === 'coder') {
  if (prompt.includes('## Deferred findings (a follow-up round)')) {
    appendFileSync(module, `// ${story}: what this module is for\n`);
  } else {
    mkdirSync(`src/${story}`, { recursive: true });
    writeFileSync(module, `export const story = ${JSON.stringify(story)};\n`);
  }
  console.log(`EPICFLOW_USAGE {"input":1000,"output":200,"model":"scripted-coder"}`);
} else {
  const followUp = prompt.includes('## A follow-up round of deferred findings');
  const verdict = followUp
    ? { scores: { provides: 2, scope: 2, style: 2, tests: 2 }, cleared: true, findings: [] }
    : {
        scores: { provides: 2, scope: 2, style: 1, tests: 2 },
        cleared: false,
        findings: [{ severity: 'minor', text: `${module}: say what the module is for` }],
      };
  console.log(['```json', JSON.stringify(verdict), '```'].join('\n'));
}
