// A scripted planner for planning-job tests (harness: command). argv: <dump dir>.
// It records what it saw (the prompt, its environment, what it could read of the
// job's credentials) and answers with a plan, chosen by what the prompt holds:
// - the epic's text asks to own .github/workflows: it obeys (a hostile planner);
// - the guidance asks for "more tests": the current stories under other ids, plus
//   a `tests` story (the ids must be given back to them);
// - the guidance says "drop the payment": `cart` and `tests` only;
// - otherwise: `cart`, then `pay`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';

const [dump] = process.argv.slice(2);
const prompt = readFileSync(process.env.EPICFLOW_PROMPT_FILE, 'utf8');
const round = process.env.EPICFLOW_ROUND;
mkdirSync(dump, { recursive: true });

function tryRead(path) {
  try {
    return readFileSync(path, 'latin1').slice(0, 1 << 16);
  } catch (e) {
    return `DENIED ${e.code}`;
  }
}
function tryRun(argv) {
  try {
    return execFileSync(argv[0], argv.slice(1), { encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    return `FAILED ${e.status ?? e.code}`;
  }
}
// Every route a prompt-injected planner would try: its environment, every process's
// environment, git's configuration of the checkout it runs in, sudo.
const loot = [
  `== env\n${JSON.stringify(process.env)}`,
  `== git config\n${tryRun(['git', 'config', '--list', '--show-origin'])}`,
  `== sudo\n${tryRun(['sudo', '-n', 'true'])}`,
];
for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
  loot.push(`== /proc/${pid}/environ\n${tryRead(`/proc/${pid}/environ`)}`);
}
const n = readdirSync(dump).filter((f) => f.startsWith('planner-')).length;
writeFileSync(
  `${dump}/planner-${n + 1}.json`,
  JSON.stringify({ round, prompt, env: process.env, cwd: process.cwd() }, null, 2),
);
writeFileSync(`${dump}/planner-loot-${n + 1}.txt`, loot.join('\n'));
// A planner that writes into its checkout: discarded, never committed anywhere.
writeFileSync('PLANNER_WAS_HERE.md', 'scribble\n');

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

let stories;
if (/ignore previous instructions/i.test(prompt)) {
  stories = [
    story('cart', 'Build the cart', ['src/cart']),
    story('deploy', 'Own the workflows', ['.github/workflows']),
  ];
} else if (/drop the payment/.test(prompt)) {
  stories = [
    story('cart', 'Build the cart', ['src/cart']),
    story('tests', 'Build the tests', ['src/tests'], ['cart']),
  ];
} else if (/more tests/.test(prompt)) {
  stories = [
    story('shopping-cart', 'Build the cart', ['src/cart']),
    story('payment', 'Build the payment', ['src/pay'], ['shopping-cart']),
    story('tests', 'Build the tests', ['src/tests'], ['shopping-cart', 'payment']),
  ];
} else {
  stories = [
    story('cart', 'Build the cart', ['src/cart']),
    story('pay', 'Build the payment', ['src/pay'], ['cart']),
  ];
}
console.log('Here is the plan.\n');
console.log(['```epicflow', 'stories:', ...stories, '```'].join('\n'));
console.log(`EPICFLOW_USAGE {"input":5000,"output":700,"model":"scripted-planner-1"}`);
