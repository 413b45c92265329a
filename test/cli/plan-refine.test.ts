/**
 * `epicflow plan refine PLAN.md "<feedback>"` in a real git repository with a `command`
 * planner (the engine's scripted agent, its story being `plan`): the drafted plan is kept
 * exactly, the planner's stories are added with `r<n>-` ids, what it could not place is
 * listed as not planned, and a plan written by hand is refused.
 */
import { afterEach, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { main } from '../../src/cli/program.js';
import { parsePlan } from '../../src/core/plan/index.js';
import {
  configYaml,
  makeRepo,
  planMarkdown,
  prompts,
  scriptedCoder,
  type TestRepo,
} from '../engine/support/repo.js';
import { describeNeeding } from '../support/needs.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const DRAFT = [
  'Here is the plan.',
  '',
  '```epicflow',
  'stories:',
  '  - id: health',
  '    title: Health endpoint',
  '    description: Add GET /health.',
  '    owns: [src/health.ts]',
  '    acceptance: ["GET /health answers 200"]',
  '  - id: wire',
  '    title: Wire it',
  '    description: Mount /health in the server.',
  '    dependsOn: [health]',
  '    owns: [src/server.ts]',
  '    acceptance: ["the server serves /health"]',
  '```',
  '',
].join('\n');

const REFINE = [
  'One story to add; one item is unclear.',
  '',
  '```epicflow',
  'stories:',
  '  - id: metrics',
  '    title: Metrics endpoint',
  '    description: Add GET /metrics.',
  '    dependsOn: [health]',
  '    owns: [src/metrics.ts]',
  '    acceptance: ["GET /metrics answers 200"]',
  'notPlanned:',
  '  - item: make it faster',
  '    question: faster than what? name the request and a target time',
  '```',
  '',
].join('\n');

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
    readStdin: async () => '',
    cwd: repo.tmp,
  });
  return { code, stdout, stderr };
}

function setUp(): void {
  repo = makeRepo({ 'README.md': '# readme\n', 'src/server.ts': 'export {};\n' });
  const planner = scriptedCoder(repo, 'planner', { plan: { '*': { stdout: DRAFT } } });
  repo.write(
    'epicflow.yml',
    configYaml({
      executors: [
        { id: 'coder', command: ['true'] },
        { id: 'thinker', command: planner, roles: ['planner'] },
      ],
      gates: ['true'],
    }),
  );
  repo.commit('config');
  writeFileSync(join(repo.tmp, 'epic.md'), '# Health\n\nA health endpoint.\n');
}

it('adds the r1- stories to the drafted plan, keeps the others exactly, lists what it could not place', async () => {
  setUp();
  expect(
    (await cli('plan', 'draft', 'epic.md', '--repo', repo.dir, '--no-agent-user', '--no-sandbox'))
      .code,
  ).toBe(0);
  const file = join(repo.tmp, 'epic.plan.md');
  const drafted = parsePlan(readFileSync(file, 'utf8'));
  if (!drafted.ok) throw new Error('the draft is invalid');
  // The planner now answers the refine round.
  scriptedCoder(repo, 'planner', { plan: { '*': { stdout: REFINE } } });

  const r = await cli(
    'plan',
    'refine',
    'epic.plan.md',
    'add a metrics endpoint; make it faster',
    '--repo',
    repo.dir,
    '--no-agent-user',
    '--no-sandbox',
  );
  expect(r.stderr).toContain('epicflow: round 1: thinker planning\n');
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('valid: 3 stories in 2 waves\n');
  expect(r.stdout).toContain('refine round 1: added r1-metrics\n');
  expect(r.stdout).toContain(
    'not planned: make it faster (faster than what? name the request and a target time)\n',
  );
  expect(r.stdout).toContain('wrote epic.plan.md\n');
  const refined = parsePlan(readFileSync(file, 'utf8'));
  if (!refined.ok) throw new Error('the refined plan is invalid');
  expect(refined.plan.stories.map((s) => s.id)).toEqual(['health', 'wire', 'r1-metrics']);
  expect(refined.plan.stories.slice(0, 2)).toEqual(drafted.plan.stories);
  expect(refined.plan.hashes['health']).toBe(drafted.plan.hashes['health']);
  expect(refined.plan.stories[2]?.dependsOn).toEqual(['health']);
  const kept = readFileSync(
    join(repo.dir, '.git', 'epicflow', 'epic.plan', 'not-planned.md'),
    'utf8',
  );
  expect(kept).toContain('## Refine round 1');
  expect(kept).toContain('- make it faster (faster than what?');

  // The planner was shown the current plan as kept, and the feedback as data.
  const told = prompts(repo, 'planner').at(-1)?.prompt ?? '';
  expect(told).toContain('## The current plan (kept exactly as it is: you add stories to it)');
  expect(told).toContain('add a metrics endpoint; make it faster');
  expect(told).toContain('`notPlanned:`');

  // A second round takes the next prefix.
  scriptedCoder(repo, 'planner', {
    plan: {
      '*': {
        stdout: REFINE.replace('id: metrics', 'id: logs').replace('src/metrics.ts', 'src/logs.ts'),
      },
    },
  });
  const again = await cli(
    'plan',
    'refine',
    'epic.plan.md',
    'add logs',
    '--repo',
    repo.dir,
    '--no-agent-user',
    '--no-sandbox',
  );
  expect(again.code).toBe(0);
  expect(again.stdout).toContain('refine round 2: added r2-logs\n');
});

it('refuses a plan written by hand, and missing feedback, before any planner runs', async () => {
  setUp();
  writeFileSync(join(repo.tmp, 'hand.md'), planMarkdown([{ id: 'a', owns: ['src/a'] }]));
  const hand = await cli(
    'plan',
    'refine',
    'hand.md',
    'add b',
    '--repo',
    repo.dir,
    '--no-agent-user',
    '--no-sandbox',
  );
  expect(hand.code).toBe(2);
  expect(hand.stderr).toContain('hand.md holds a plan written by hand, outside the plan section');
  const empty = await cli(
    'plan',
    'refine',
    'hand.md',
    '  ',
    '--repo',
    repo.dir,
    '--no-agent-user',
    '--no-sandbox',
  );
  expect(empty.code).toBe(2);
  expect(empty.stderr).toContain('plan refine needs feedback');
  expect(prompts(repo, 'planner')).toEqual([]);
});

describeNeeding(['root', 'sandbox'], 'epicflow plan refine as root', () => {
  it("runs the planner as plan draft's: as the agent user, in the sandbox, kept out of the user's state and checkout", async () => {
    setUp();
    expect(
      (await cli('plan', 'draft', 'epic.md', '--repo', repo.dir, '--no-agent-user', '--no-sandbox'))
        .code,
    ).toBe(0);
    // The refine round's planner reads an epic's state, writes into the checkout and beside
    // it, then adds a story whose title names who it ran as and what it read.
    const secret = join(repo.dir, '.git', 'epicflow', 'other', 'secret.txt');
    mkdirSync(dirname(secret), { recursive: true });
    writeFileSync(secret, 'the-state\n');
    const attack = [
      `r="$(cat ${secret} 2>/dev/null || echo no-read)"`,
      `echo hostile >> ${repo.dir}/README.md 2>/dev/null`,
      `echo hostile > ${repo.tmp}/planted.txt 2>/dev/null`,
      `printf '%s\\n' '${REFINE}' | sed "s/title: Metrics endpoint/title: $(id -un)-$r/"`,
    ].join('; ');
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [
          { id: 'coder', command: ['true'] },
          { id: 'thinker', command: ['sh', '-c', attack], roles: ['planner'] },
        ],
        gates: ['true'],
      }),
    );
    repo.commit('a hostile planner');
    const r = await cli('plan', 'refine', 'epic.plan.md', 'add metrics', '--repo', repo.dir);
    expect(r.code).toBe(0);
    const note =
      'epicflow: note: epicflow runs as root, so the agent, setup and gates run as the unprivileged user epicflow-agent';
    expect(r.stderr.split(note)).toHaveLength(2);
    const refined = readFileSync(join(repo.tmp, 'epic.plan.md'), 'utf8');
    expect(/title: (\S+)/.exec(refined.slice(refined.indexOf('id: r1-metrics')))?.[1]).toMatch(
      /^epicflow-agent(?:-\d+)?-no-read$/,
    );
    expect(existsSync(join(repo.tmp, 'planted.txt'))).toBe(false);
    expect(repo.read('README.md')).toBe('# readme\n');
  }, 180_000);
});
