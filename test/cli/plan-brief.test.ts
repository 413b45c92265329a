/**
 * `epicflow plan draft` on a brief: only an approved brief whose open questions all have an
 * answer is planned from (its whole text is the planner's input); a draft, or a question
 * still open, is refused with exit 2 before any planner runs.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli/program.js';
import {
  configYaml,
  makeRepo,
  prompts,
  scriptedCoder,
  type Script,
  type TestRepo,
} from '../engine/support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const PLAN = [
  'Here is the plan.',
  '',
  '```epicflow',
  'stories:',
  '  - id: health',
  '    title: Health route',
  '    description: Add the health route.',
  '    owns: ["src/health.ts"]',
  '    acceptance: ["GET /health answers 200"]',
  '```',
  '',
].join('\n');

function brief(status: string, answer2: string): string {
  return [
    '# Brief: health endpoint',
    `Status: ${status}`,
    '',
    '## Goal',
    'The load balancer needs a health route.',
    '',
    '## Open questions',
    '1. Which path?',
    '   Answer: /health',
    '2. Does it check the database?',
    ...(answer2 === '' ? [] : [`   Answer: ${answer2}`]),
    '',
  ].join('\n');
}

function setUp(epic: string): void {
  repo = makeRepo({ 'README.md': '# readme\n' });
  const planner = scriptedCoder(repo, 'planner', { plan: { '1': { stdout: PLAN } } } as Script);
  const coder = scriptedCoder(repo, 'coder', {});
  repo.write(
    'epicflow.yml',
    configYaml({
      executors: [
        { id: 'coder', command: coder },
        { id: 'thinker', command: planner, roles: ['planner'] },
      ],
      gates: ['true'],
    }),
  );
  repo.commit('config');
  writeFileSync(join(repo.tmp, 'brief.md'), epic);
}

async function draft(): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  // As the tests run as root: the planner runs as root, outside the kernel sandbox.
  const code = await main(
    ['plan', 'draft', 'brief.md', '--repo', repo.dir, '--no-agent-user', '--no-sandbox'],
    {
      stdout: (s) => (stdout += s),
      stderr: (s) => (stderr += s),
      readStdin: async () => '',
      cwd: repo.tmp,
      env: { ...process.env, XDG_CONFIG_HOME: join(repo.tmp, 'xdg') },
    },
  );
  return { code, stdout, stderr };
}

describe('plan draft from a brief', () => {
  it('plans from an approved brief with every question answered, the brief as its input', async () => {
    setUp(brief('approved', 'No, only the process.'));
    const r = await draft();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('wrote brief.plan.md');
    const prompt = prompts(repo, 'planner')[0]?.prompt ?? '';
    expect(prompt).toContain('Does it check the database?');
    expect(prompt).toContain('Answer: No, only the process.');
    expect(readFileSync(join(repo.tmp, 'brief.plan.md'), 'utf8')).toContain('id: health');
  });

  it('refuses a draft brief with exit 2, before any planner runs', async () => {
    setUp(brief('draft', 'No.'));
    const r = await draft();
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: brief.md is a brief with Status: draft, not approved');
    expect(r.stderr).toContain('set Status: approved');
    expect(prompts(repo, 'planner')).toHaveLength(0);
    expect(existsSync(join(repo.tmp, 'brief.plan.md'))).toBe(false);
  });

  it('refuses an approved brief with an open question, naming it', async () => {
    setUp(brief('approved', ''));
    const r = await draft();
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: brief.md is approved but a question is still open');
    expect(r.stderr).toContain('  2. Does it check the database?');
    expect(r.stderr).not.toContain('1. Which path?');
    expect(prompts(repo, 'planner')).toHaveLength(0);
  });
});
