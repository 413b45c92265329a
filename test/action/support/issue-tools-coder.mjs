// A scripted coder that asks for labels and assignees on its story's sub-issue, as a
// prompt-injected agent might. argv: <dump dir>. It writes the story's owned file and ends
// its reply with request lines: one allowed label, labels it may not touch (`epic` and one
// unknown), one allowed assignee and one not allowed.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const [dump] = process.argv.slice(2);
const story = process.env.EPICFLOW_STORY;
mkdirSync(dump, { recursive: true });
writeFileSync(
  `${dump}/${story}.json`,
  JSON.stringify({ prompt: readFileSync(process.env.EPICFLOW_PROMPT_FILE, 'utf8') }, null, 2),
);
mkdirSync(`src/${story}`, { recursive: true });
writeFileSync(`src/${story}/index.js`, `export const story = ${JSON.stringify(story)};\n`);
console.log(`EPICFLOW_USAGE {"input":1200,"output":300,"model":"scripted-1"}`);
console.log('Done: the module exports its story.');
console.log('add-label: needs-docs, epic');
console.log('- remove-label: wip');
console.log('add-label: `deploy-now`');
console.log('assign: @octocat, mallory');
