/**
 * Deferred findings (`judge.deferNonBlocking`): a judge's finding below critical does not
 * hold the story back; it is listed under the story as Deferred, and once the epic is
 * finished `epicflow run --deferred` runs one follow-up round over them.
 */
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  copyLink,
  copyRepo,
  epicMerges,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  reportJson,
  run,
  scriptedCoder,
  showFile,
  stateDir,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const scores = { provides: 2, scope: 2, style: 1, tests: 2 };
const verdict = (v: object): string => ['```json', JSON.stringify(v), '```', ''].join('\n');
const MINOR = 'src/s.txt: end the greeting with a full stop';

/** A judge of `r` that answers each verdict file in turn (the last one from then on). */
function judgeOf(r: TestRepo, answers: string[]): string[] {
  const files = answers.map((a, i) => {
    const file = join(r.tmp, `verdict-${i}.md`);
    writeFileSync(file, a);
    return file;
  });
  const count = join(r.tmp, 'judge-calls');
  const pick = files
    .map((f, i) =>
      i === files.length - 1 ? `cat '${f}'` : `[ "$n" = ${i} ] && cat '${f}' && exit 0`,
    )
    .join('; ');
  return scriptedCoder(r, 'reviewer', {
    '*': {
      '*': {
        sh: [`n=$(cat '${count}' 2>/dev/null || echo 0); echo $((n + 1)) > '${count}'; ${pick}`],
      },
    },
  });
}

/** A coder of `r` that writes `hello`; in a follow-up round it adds a full stop (`changes`) or does nothing. */
function coderOf(r: TestRepo, changes = true): string[] {
  const again = changes ? 'echo "hello." > src/s.txt' : 'true';
  return scriptedCoder(r, 'coder', {
    s: {
      '*': {
        sh: [`mkdir -p src; if [ -f src/s.txt ]; then ${again}; else echo hello > src/s.txt; fi`],
      },
    },
  });
}

function configOf(coder: string[], judge: string[]): string {
  return configYaml({
    executors: [
      { id: 'coder', command: coder },
      { id: 'reviewer', command: judge, roles: ['judge'] },
    ],
    gates: ['true'],
    extra: 'judge: { executor: reviewer, rounds: 1, deferNonBlocking: true }',
  });
}

const PLAN = planMarkdown([{ id: 's', owns: ['src/s.txt'] }]);

function setUp(answers: string[]): string {
  repo = makeRepo({ 'README.md': 'x\n' });
  repo.write('epicflow.yml', configOf(coderOf(repo), judgeOf(repo, answers)));
  repo.commit('config');
  return PLAN;
}

const deferring = verdict({
  scores,
  cleared: false,
  findings: [{ severity: 'minor', text: MINOR }],
});
const cleared = verdict({ scores: { ...scores, style: 2 }, cleared: true, findings: [] });

/**
 * The epic both follow-up tests start from, delivered once for the file: `s` merged with the
 * judge's minor finding deferred. Each test goes on in a copy of it (`copyRepo`); the
 * committed config names the coder and the judge through a link each test points at its
 * copy, where the test writes their scripts for what comes next (`followUp`).
 */
const link = copyLink();
let shared: Promise<TestRepo> | undefined;
afterAll(async () => {
  (await shared?.catch(() => undefined))?.cleanup();
  link.cleanup();
});

async function deliver(): Promise<TestRepo> {
  const made = makeRepo({ 'README.md': 'x\n' });
  link.use(made);
  made.write(
    'epicflow.yml',
    configOf(link.through(made, coderOf(made)), link.through(made, judgeOf(made, [deferring]))),
  );
  made.commit('config');
  expect((await run(made, PLAN)).code).toBe(0);
  return made;
}

/** A copy of the delivered epic; from here on the judge gives `answers`, the coder `changes` or not. */
async function deferredEpic(followUp: { answers: string[]; changes: boolean }): Promise<string> {
  shared ??= deliver();
  repo = copyRepo(await shared);
  link.use(repo);
  coderOf(repo, followUp.changes);
  // The judge was asked once (its count is in the copy): its next answers come after that one.
  judgeOf(repo, [deferring, ...followUp.answers]);
  return PLAN;
}

// Off (the default), a minor finding blocks as any and the judge is not asked for
// severities: test/engine/judge.test.ts's story whose rounds run out.
describe('deferred findings', () => {
  it('merge the story, list the finding under Deferred, and `run --deferred` follows it up once', async () => {
    // The delivery: merged, the finding deferred.
    const plan = await deferredEpic({ answers: [cleared], changes: true });
    expect(prompts(repo, 'coder')).toHaveLength(1);
    expect(epicMerges(repo)).toEqual(['Merge story s: Story s']);
    expect(record(repo, 's').deferred).toEqual([`minor: ${MINOR}`]);
    // The judge was asked for severities.
    expect(prompts(repo, 'reviewer')[0]?.prompt).toContain('## Severity');
    const report = readFileSync(join(stateDir(repo), 'report.md'), 'utf8');
    expect(report).toContain(
      [
        '## Deferred',
        '',
        'Findings below critical that the judge let these stories merge with:',
        '',
        '- `s` Story s',
        `  - minor: ${MINOR}`,
      ].join('\n'),
    );
    expect(report).toContain(
      '1 deferred finding on `s` (listed under Deferred): `epicflow run --deferred` runs one follow-up round over them',
    );
    expect(reportJson(repo).stories[0]).toMatchObject({ deferred: [`minor: ${MINOR}`] });

    const followUp = await run(repo, plan, { deferred: true });
    expect(followUp.code).toBe(0);
    expect(followUp.stdout).toContain('Follow-up round: 1 deferred finding on `s`');
    const coderPrompts = prompts(repo, 'coder');
    expect(coderPrompts).toHaveLength(2);
    expect(coderPrompts[1]?.prompt).toContain('## Deferred findings (a follow-up round)');
    expect(coderPrompts[1]?.prompt).toContain(`- minor: ${MINOR}`);
    const judged = prompts(repo, 'reviewer');
    expect(judged).toHaveLength(2);
    expect(judged[1]?.prompt).toContain('## A follow-up round of deferred findings');
    // On its branch, judged and merged again.
    expect(epicMerges(repo)).toEqual(['Merge story s: Story s', 'Merge story s: Story s']);
    expect(showFile(repo, 'epic/epic', 'src/s.txt')).toBe('hello.');
    const after = record(repo, 's');
    expect(after.status).toBe('done');
    expect(after.attempt).toBe(2);
    expect(after.deferred).toBeUndefined();
    expect(after.deferredRound).toEqual({
      findings: [`minor: ${MINOR}`],
      supersedes: expect.any(String),
    });
    const report2 = readFileSync(join(stateDir(repo), 'report.md'), 'utf8');
    expect(report2).not.toContain('## Deferred');
    expect(report2).toContain('follow-up round over 1 deferred finding');

    // One round only: a second `--deferred` has nothing left to follow up.
    const again = await run(repo, plan, { deferred: true });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('No follow-up round: no story has deferred findings left');
    expect(prompts(repo, 'coder')).toHaveLength(2);
  });

  it('a follow-up round that changes nothing leaves the earlier merge standing, the finding still listed', async () => {
    const plan = await deferredEpic({ answers: [deferring], changes: false });
    const merge = record(repo, 's').mergeCommit;
    const followUp = await run(repo, plan, { deferred: true });
    expect(followUp.code).toBe(0);
    expect(prompts(repo, 'coder')).toHaveLength(2);
    expect(epicMerges(repo)).toEqual(['Merge story s: Story s']);
    const after = record(repo, 's');
    expect(after).toMatchObject({
      status: 'done',
      mergeCommit: merge,
      deferred: [`minor: ${MINOR}`],
      deferredRound: { findings: [`minor: ${MINOR}`] },
    });
    const report = readFileSync(join(stateDir(repo), 'report.md'), 'utf8');
    expect(report).toContain(`  - minor: ${MINOR}`);
    expect(report).toContain(`| \`${String(merge).slice(0, 7)}\` | coder |`);
    expect(report).not.toContain('epicflow run --deferred');
    // A plain rerun finds the epic finished.
    expect((await run(repo, plan)).code).toBe(0);
    expect(prompts(repo, 'coder')).toHaveLength(2);
  });

  it('a critical finding still blocks the story, and a plain string is critical', async () => {
    const plan = setUp([
      verdict({
        scores,
        cleared: false,
        findings: ['src/s.txt is empty of substance', { severity: 'major', text: 'naming' }],
      }),
    ]);
    const result = await run(repo, plan);
    expect(result.code).toBe(1);
    expect(record(repo, 's').status).toBe('failed');
    expect(record(repo, 's').reason).toContain(
      'judge did not clear the story after 1 revision: src/s.txt is empty of substance',
    );
    expect(epicMerges(repo)).toEqual([]);
  });
});
