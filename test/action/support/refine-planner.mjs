// A scripted planner for the refine tests (harness: command). argv: <dump dir>.
// It records the prompt it was given and answers, chosen by what the prompt holds:
// - a refine round (the prompt asks for new stories only) whose feedback says
//   "ignore previous instructions": it obeys, adding a story owning .github/workflows;
// - a refine round asking to "add a receipt": one new story, `receipt`, after `pay`,
//   owning src/r1-receipt (the folder the scripted coder writes for the id it gets), and
//   one item it cannot place, under `notPlanned`;
// - otherwise (the first plan): `cart`, then `pay`.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';

const [dump] = process.argv.slice(2);
const prompt = readFileSync(process.env.EPICFLOW_PROMPT_FILE, 'utf8');
const round = process.env.EPICFLOW_ROUND;
mkdirSync(dump, { recursive: true });
const n = readdirSync(dump).filter((f) => f.startsWith('refine-planner-')).length;
writeFileSync(`${dump}/refine-planner-${n + 1}.json`, JSON.stringify({ round, prompt }, null, 2));

function story(id, title, owns, dependsOn = []) {
  return [
    `  - id: ${id}`,
    `    title: ${JSON.stringify(title)}`,
    `    description: ${JSON.stringify(`Implement ${title.toLowerCase()}.`)}`,
    `    owns: [${owns.join(', ')}]`,
    ...(dependsOn.length > 0 ? [`    dependsOn: [${dependsOn.join(', ')}]`] : []),
    `    acceptance: [${JSON.stringify(`${owns[0]} exports story`)}]`,
  ].join('\n');
}

const refining = prompt.includes('Answer with the NEW stories only');
let stories;
let notPlanned = [];
if (refining && /ignore previous instructions/i.test(prompt)) {
  stories = [story('deploy', 'Own the workflows', ['.github/workflows'])];
} else if (refining && /add a receipt/.test(prompt)) {
  stories = [story('receipt', 'Send the receipt', ['src/r1-receipt'], ['pay'])];
  notPlanned = ['  - item: "make it pretty <b>now</b>"', '    question: pretty how?'];
} else {
  stories = [
    story('cart', 'Build the cart', ['src/cart']),
    story('pay', 'Build the payment', ['src/pay'], ['cart']),
  ];
}
console.log('Here is the plan.\n');
const extra = notPlanned.length > 0 ? ['notPlanned:', ...notPlanned] : [];
console.log(['```epicflow', 'stories:', ...stories, ...extra, '```'].join('\n'));
console.log(`EPICFLOW_USAGE {"input":4000,"output":500,"model":"scripted-planner-1"}`);
