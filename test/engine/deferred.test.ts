/**
 * Deferred findings (`judge.deferNonBlocking`): a judge's finding below critical does not
 * hold the story back; it is listed under the story as Deferred, and once the epic is
 * finished `epicflow run --deferred` runs one follow-up round over them.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
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

/** A judge that answers each verdict file in turn (the last one from then on). */
function judgeOf(answers: string[]): string[] {
  const files = answers.map((a, i) => {
    const file = join(repo.tmp, `verdict-${i}.md`);
    writeFileSync(file, a);
    return file;
  });
  const count = join(repo.tmp, 'judge-calls');
  const pick = files
    .map((f, i) =>
      i === files.length - 1 ? `cat '${f}'` : `[ "$n" = ${i} ] && cat '${f}' && exit 0`,
    )
    .join('; ');
  return scriptedCoder(repo, 'reviewer', {
    '*': {
      '*': {
        sh: [`n=$(cat '${count}' 2>/dev/null || echo 0); echo $((n + 1)) > '${count}'; ${pick}`],
      },
    },
  });
}

function setUp(answers: string[], defer = true, followUpChanges = true): string {
  repo = makeRepo({ 'README.md': 'x\n' });
  const again = followUpChanges ? 'echo "hello." > src/s.txt' : 'true';
  const coder = scriptedCoder(repo, 'coder', {
    s: {
      '*': {
        sh: [`mkdir -p src; if [ -f src/s.txt ]; then ${again}; else echo hello > src/s.txt; fi`],
      },
    },
  });
  repo.write(
    'epicflow.yml',
    configYaml({
      executors: [
        { id: 'coder', command: coder },
        { id: 'reviewer', command: judgeOf(answers), roles: ['judge'] },
      ],
      gates: ['true'],
      extra: `judge: { executor: reviewer, rounds: 1, deferNonBlocking: ${defer} }`,
    }),
  );
  repo.commit('config');
  return planMarkdown([{ id: 's', owns: ['src/s.txt'] }]);
}

const deferring = verdict({
  scores,
  cleared: false,
  findings: [{ severity: 'minor', text: MINOR }],
});
const cleared = verdict({ scores: { ...scores, style: 2 }, cleared: true, findings: [] });

describe('deferred findings', () => {
  it('merge the story, list the finding under Deferred, and `run --deferred` follows it up once', async () => {
    const plan = setUp([deferring, cleared]);
    const first = await run(repo, plan);
    expect(first.code).toBe(0);
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
    const plan = setUp([deferring], true, false);
    expect((await run(repo, plan)).code).toBe(0);
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

  it('off (the default), a finding of any severity blocks as before', async () => {
    const plan = setUp([deferring], false);
    const result = await run(repo, plan);
    expect(result.code).toBe(1);
    expect(record(repo, 's').reason).toContain(`minor: ${MINOR}`);
    expect(prompts(repo, 'reviewer')[0]?.prompt).not.toContain('## Severity');
  });
});
