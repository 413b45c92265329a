/**
 * Planning through the REAL codex and claude CLIs (pinned in test/agent-clis) against
 * the scripted model server on 127.0.0.1, wired as `epicflow plan draft` wires
 * them: a detached checkout, the executor adapters, the validator, the repair
 * rounds, and the file written only when the plan is valid.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePlan } from '../../src/core/plan/index.js';
import { draftPlanLocally, type LocalDraftResult } from '../../src/jobs/local/plan-local.js';
import { AGENT_CLIS_INSTALL_MS, agentCliBin } from '../support/agent-clis.js';
import {
  explainWith,
  startModelServer,
  type ModelServer,
  type Step,
} from '../support/model-server/index.js';
import { git, makeRepo, type TestRepo } from './support/repo.js';

const USAGE = { input: 1000, cachedInput: 100, output: 200 };

let repo: TestRepo | undefined;
let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  repo?.cleanup();
  server = undefined;
  repo = undefined;
});

/** The pinned CLIs (test/agent-clis), installed into the tests' cache folder on first use. */
let codexBin = '';
let claudeBin = '';
beforeAll(async () => {
  [codexBin, claudeBin] = await Promise.all([agentCliBin('codex'), agentCliBin('claude')]);
}, AGENT_CLIS_INSTALL_MS);

const VALID = [
  'Here is the plan.',
  '```epicflow',
  'stories:',
  '  - id: health',
  '    title: Add a health endpoint',
  '    description: Serve GET /health answering {"status":"ok"}.',
  '    owns: [src/health.ts]',
  '    reads: [src/server.ts]',
  '    acceptance: ["GET /health answers 200"]',
  '  - id: wire',
  '    title: Register the route',
  '    description: Mount the health handler in the server.',
  '    dependsOn: [health]',
  '    owns: [src/server.ts]',
  '    acceptance: ["the server serves /health"]',
  '```',
].join('\n');

/** A cycle (a -> b -> a) and an overlap (src and src/b). */
const CYCLE_AND_OVERLAP = [
  '```epicflow',
  'stories:',
  '  - { id: a, title: A, description: D, owns: [src], dependsOn: [b], acceptance: [x] }',
  '  - { id: b, title: B, description: D, owns: [src/b], dependsOn: [a], acceptance: [y] }',
  '```',
].join('\n');

const EPIC = '# Health\n\nThe load balancer needs a health endpoint.\n';

async function draft(
  harness: 'codex' | 'claude',
  script: Step[],
  extra = '',
): Promise<{ result: LocalDraftResult; events: string[]; repo: TestRepo; server: ModelServer }> {
  server = await startModelServer(script);
  repo = makeRepo({ 'README.md': '# readme\n', 'src/server.ts': 'export {};\n' });
  const planner =
    harness === 'codex'
      ? [
          '  - id: thinker',
          '    harness: codex',
          '    model: gpt-5.6',
          '    roles: [planner]',
          // The CLI's own retries off, so an error ends at once.
          "    args: ['-c', 'model_providers.epicflow.request_max_retries=0', '-c', 'model_providers.epicflow.stream_max_retries=0']",
          "    env: { OPENAI_API_KEY: '${OPENAI_API_KEY}' }",
        ]
      : [
          '  - id: thinker',
          '    harness: claude',
          '    model: claude-sonnet-4-5',
          '    roles: [planner]',
          "    env: { ANTHROPIC_API_KEY: '${ANTHROPIC_API_KEY}', CLAUDE_CODE_MAX_RETRIES: '0' }",
        ];
  repo.write(
    'epicflow.yml',
    [
      'executors:',
      '  - { id: coder, harness: command, command: ["true"] }',
      ...planner,
      extra,
      '',
    ].join('\n'),
  );
  repo.commit('config');
  writeFileSync(join(repo.tmp, 'epic.md'), EPIC);
  const events: string[] = [];
  const result = await draftPlanLocally(
    // As root, outside the kernel sandbox: these tests are about the agents' own CLIs.
    { file: 'epic.md', repo: repo.dir, agentUser: false, sandbox: false },
    {
      cwd: repo.tmp,
      env: {
        PATH: process.env.PATH,
        OPENAI_API_KEY: 'sk-test-key',
        ANTHROPIC_API_KEY: 'sk-ant-test-key',
        // Anything that would leave 127.0.0.1 shows up at the server as a proxy request.
        HTTPS_PROXY: server.url,
        HTTP_PROXY: server.url,
        NO_PROXY: '127.0.0.1',
        GITHUB_TOKEN: 'ghs_must_not_leak',
      },
      onEvent: (m) => events.push(m),
      executorDeps: {
        binaries: { codex: codexBin, claude: claudeBin },
        baseUrls: { codex: server.url, claude: server.url },
      },
    },
  );
  return { result, events, repo, server };
}

/** The model requests whose body holds `text` (the prompt of a round travels in each of its requests). */
function requestsWith(s: ModelServer, text: string): unknown[] {
  return s.modelRequests().filter((r) => JSON.stringify(r.body).includes(text));
}

describe('planning with the real agent CLIs', () => {
  it('codex: a valid answer is written; what it changed in the checkout is discarded and noted by path', async () => {
    const { result, repo, server } = await draft('codex', [
      { kind: 'tool', command: 'echo hacked >> README.md && echo x > stray.txt', usage: USAGE },
      { kind: 'message', text: VALID, usage: USAGE },
    ]);
    await explainWith(server, () => {
      expect(result.outcome.kind).toBe('planned');
      expect(result.written).toBe(true);
      expect(result.outcome.notes).toEqual([
        'planner changed README.md, stray.txt: discarded (round 1, thinker)',
      ]);
      // codex sums usage over the turn's requests and has no cost: the price table gives it.
      expect(result.outcome.usage).toEqual([
        expect.objectContaining({
          executor: 'thinker',
          model: 'gpt-5.6',
          tokens: { input: 2000, cachedInput: 200, cacheWrite: 0, output: 400 },
          measured: true,
          costSource: 'price-table',
        }),
      ]);
      const written = readFileSync(result.out, 'utf8');
      expect(written.startsWith(EPIC)).toBe(true);
      const parsed = parsePlan(written);
      expect(parsed.ok && parsed.plan.waves).toEqual([['health'], ['wire']]);
      expect(server.strayRequests()).toEqual([]);
      expect(JSON.stringify(server.modelRequests()[0]?.body)).toContain(
        'The load balancer needs a health endpoint.',
      );
      expect(repo.read('README.md')).toBe('# readme\n');
      expect(git(repo.dir, 'status', '--porcelain')).toBe('');
      expect(git(repo.dir, 'worktree', 'list').split('\n')).toHaveLength(1);
    });
  });

  it('claude: a cycle and an overlap are repaired in round 2, whose prompt lists them with their codes', async () => {
    const { result, events, server } = await draft('claude', [
      { kind: 'tool', command: 'echo hacked > README.md', usage: USAGE },
      { kind: 'message', text: CYCLE_AND_OVERLAP, usage: USAGE },
      { kind: 'message', text: VALID, usage: USAGE },
    ]);
    await explainWith(server, () => {
      expect(result.outcome.kind).toBe('planned');
      expect(result.outcome.rounds).toBe(2);
      expect(events).toContain('round 1: plan refused (cycle, owns-overlap); asking for a repair');
      expect(result.outcome.notes).toEqual([
        'planner changed README.md: discarded (round 1, thinker)',
      ]);
      const repair = requestsWith(server, 'Your previous plan was refused');
      expect(repair.length).toBeGreaterThan(0);
      const body = JSON.stringify(repair[0]);
      expect(body).toContain('- cycle: a -> b -> a');
      expect(body).toContain(
        '- owns-overlap: stories \\"a\\" and \\"b\\" own overlapping paths \\"src\\" and \\"src/b\\"',
      );
      expect(body).toContain('(round 2)');
      // Claude Code reports its own cost; both turns are summed under the planner.
      expect(result.outcome.usage).toHaveLength(1);
      expect(result.outcome.usage[0]).toMatchObject({
        executor: 'thinker',
        measured: true,
        costSource: 'cli',
      });
      expect(parsePlan(readFileSync(result.out, 'utf8')).ok).toBe(true);
    });
  });

  it('codex: a plan that stays invalid is an outcome listing the violations, and nothing is written', async () => {
    const { result, server } = await draft(
      'codex',
      [{ kind: 'message', text: CYCLE_AND_OVERLAP, usage: USAGE }],
      'planner: { repairRounds: 1 }',
    );
    await explainWith(server, () => {
      expect(result.written).toBe(false);
      expect(existsSync(result.out)).toBe(false);
      if (result.outcome.kind !== 'invalid')
        throw new Error(`expected invalid, got ${result.outcome.kind}`);
      expect(result.outcome.rounds).toBe(2);
      expect(result.outcome.violations.map((v) => `${v.code}: ${v.message}`)).toEqual([
        'cycle: a -> b -> a',
        'owns-overlap: stories "a" and "b" own overlapping paths "src" and "src/b"',
      ]);
      expect(requestsWith(server, '(round 2)').length).toBeGreaterThan(0);
      expect(requestsWith(server, '(round 3)')).toEqual([]);
    });
  });
});
