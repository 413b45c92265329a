/**
 * A coder's claims against what it ran, through `epicflow run`: the REAL Claude Code CLI
 * (against the scripted model server on 127.0.0.1) says it verified a command it never
 * ran; the story is warned, the record and report say so, and the judge reads it first.
 * A `command` agent's claims cannot be checked, and say so.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { dirname } from 'node:path';
import { readFileSync } from 'node:fs';
import { AGENT_CLIS_INSTALL_MS, agentCliBin } from '../support/agent-clis.js';
import { explainWith, startModelServer, type ModelServer } from '../support/model-server/index.js';
import {
  CLEARED_VERDICT,
  configYaml,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  run,
  scriptedCoder,
  stateDir,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo | undefined;
let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  repo?.cleanup();
  server = undefined;
  repo = undefined;
});

/** The folder of the pinned Claude Code (test/agent-clis), installed on first use, for the PATH. */
let agentBins = '';
beforeAll(async () => {
  agentBins = dirname(await agentCliBin('claude'));
}, AGENT_CLIS_INSTALL_MS);

const USAGE = { input: 1000, cachedInput: 100, cacheWrite: 50, output: 20 };
const plan = planMarkdown([{ id: 's', owns: ['src/s.txt'] }]);

describe("the coder's claims", () => {
  it('a command it says it verified but never ran: warned, recorded, reported, and read first by the judge', async () => {
    server = await startModelServer([
      { kind: 'tool', command: 'mkdir -p src && echo s > src/s.txt', usage: USAGE },
      {
        kind: 'message',
        text: 'Wrote src/s.txt.\n\nverified: npm test\nverified: mkdir -p src\nconfidence: low',
        usage: USAGE,
      },
    ]);
    const r = (repo = makeRepo({ 'README.md': 'x\n' }));
    const judge = scriptedCoder(r, 'reviewer', { '*': { '*': { stdout: CLEARED_VERDICT } } });
    r.write(
      'epicflow.yml',
      [
        'executors:',
        '  - id: claude',
        '    harness: claude',
        '    model: claude-sonnet-4-5',
        "    env: { ANTHROPIC_API_KEY: '${ANTHROPIC_API_KEY}', ANTHROPIC_BASE_URL: '${ANTHROPIC_BASE_URL}', CLAUDE_CODE_MAX_RETRIES: '0' }",
        '  - id: reviewer',
        '    harness: command',
        `    command: ${JSON.stringify(judge)}`,
        '    roles: [judge]',
        'gates: ["true"]',
        'judge: { executor: reviewer, rounds: 1 }',
        '',
      ].join('\n'),
    );
    r.commit('config');
    const out = await run(
      r,
      plan,
      {},
      {
        env: {
          PATH: [agentBins, dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
          HOME: r.tmp,
          ANTHROPIC_API_KEY: 'sk-ant-test-key',
          ANTHROPIC_BASE_URL: server.url,
          HTTPS_PROXY: server.url,
          HTTP_PROXY: server.url,
          NO_PROXY: '127.0.0.1',
        },
      },
    );
    const fabricated =
      'fabricated status: round 1 (claude) claims "verified: npm test", but never ran it';
    const low = 'confidence: low, says round 1 (claude)';
    await explainWith(server, () => {
      expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: '' });
      expect(out.stdout).toContain(`[s] warning: ${fabricated}\n`);
      expect(out.stdout).toContain(`[s] warning: ${low}\n`);
      // The claim it did run is not flagged.
      expect(out.stdout).not.toContain('"verified: mkdir -p src"');
    });
    expect(record(r, 's')['notes']).toEqual(expect.arrayContaining([fabricated, low]));
    expect(readFileSync(`${stateDir(r)}/report.md`, 'utf8')).toContain('fabricated status');
    const [judged] = prompts(r, 'reviewer');
    const text = judged?.prompt ?? '';
    expect(text).toContain(`## Evidence notes (checked by epicflow, not written by the coder)`);
    expect(text).toContain(`- ${fabricated}`);
    expect(text.indexOf('## Evidence notes')).toBeLessThan(text.indexOf('## The change'));
  }, 360_000);

  it('a command agent cannot show what it ran: its claims are "not checked", never verified', async () => {
    const r = (repo = makeRepo({ 'README.md': 'x\n' }));
    const coder = scriptedCoder(r, 'coder', {
      s: { '*': { write: { 'src/s.txt': 's\n' }, stdout: 'Done.\nverified: npm test\n' } },
    });
    r.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    r.commit('config');
    const out = await run(r, plan);
    expect(out.code).toBe(0);
    const note =
      'not checked: round 1 (bot) claims "verified: npm test", and its output shows no tool calls to check them against';
    expect(out.stdout).toContain(`[s] warning: ${note}\n`);
    expect(record(r, 's')['notes']).toContain(note);
  });
});
