import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DEFAULT_CONFIG, parseConfig, validateConfig } from '../../../src/core/config/schema.js';
import { EpicflowError, describeError } from '../../../src/core/errors.js';

/** The details of the config error `text` raises (fails when it parses). */
function problems(text: string, file = 'epicflow.yml'): readonly string[] {
  try {
    parseConfig(text, file);
  } catch (error) {
    expect(error).toBeInstanceOf(EpicflowError);
    const e = error as EpicflowError;
    expect(e.tag).toBe('config');
    expect(e.message).toBe(`invalid config in ${file}`);
    return e.details;
  }
  throw new Error('expected the config to be rejected');
}

const DEFAULTS = {
  executors: [],
  gates: [],
  fixRounds: 2,
  mergeRevisions: 1,
  setupRepair: false,
  setupCache: true,
  tasks: false,
  concurrency: 4,
  timeouts: { storyMs: 60 * 60_000, gateMs: 20 * 60_000, silenceMs: 15 * 60_000 },
  retries: { transient: 3, backoffMs: 2000 },
  labels: { epic: 'epic' },
  issueTools: { labels: [], assignees: [] },
  allowWorkflowChanges: false,
  prices: {},
  planner: { maxStories: 30, repairRounds: 2, subIssues: false },
  prompt: { startingCode: { budget: 40_000, perFile: 8_000 } },
};

/** Every key, with the comments a user writes beside them. */
const COMMENTED_EXAMPLE = `
executors:                 # the roster (docs/executors.md)
  - id: codex
    harness: codex         # codex | claude | gemini | opencode | aider | command
    model: gpt-5.6
    slots: 2               # stories it may code at once (default 1)
    priority: 1            # lower is picked first (default 100)
    roles: [coder]         # coder | judge | verifier (default [coder])
    env: { OPENAI_API_KEY: "\${OPENAI_API_KEY}" }   # secrets only as \${VAR}
  - id: claude
    harness: claude
    model: claude-sonnet-4-5
    roles: [coder, judge]
    priority: 2
setup: npm ci              # run in each story worktree before the coder
gates: [npm test, npm run lint]
fixRounds: 2               # coder rounds fed with gate failures
setupCache: false          # setup runs on every fresh checkout
judge: { executor: claude, rounds: 2 }   # optional
concurrency: 4             # stories in flight (also capped by coder slots)
timeouts: { story: 60m, gate: 20m }
retries: { transient: 3, backoff: 2s }   # transient faults of a turn, per story
budget: { usd: 50, tokens: 20000000 }    # optional: halt (not fail) when passed
board: { project: "https://github.com/orgs/acme/projects/7" }   # optional
labels: { epic: epic }
issueTools: { labels: [needs-docs], assignees: [octocat] }   # what a coder may ask for on its sub-issue
allowWorkflowChanges: false
prompt: { startingCode: { budget: 20000, perFile: 4000 } }   # the code a first turn is shown
`;

describe('parseConfig', () => {
  it('gives every default for an empty file, a blank file or one of comments', () => {
    for (const text of ['', '\n\n', '# nothing here\n', '---\n']) {
      expect(parseConfig(text, 'epicflow.yml')).toEqual(DEFAULTS);
    }
    expect(DEFAULT_CONFIG).toEqual(DEFAULTS);
  });

  it('parses a commented example of every key into the full config', () => {
    expect(parseConfig(COMMENTED_EXAMPLE, '.github/epicflow.yml')).toEqual({
      executors: [
        {
          id: 'codex',
          harness: 'codex',
          model: 'gpt-5.6',
          args: [],
          slots: 2,
          priority: 1,
          roles: ['coder'],
          env: { OPENAI_API_KEY: '${OPENAI_API_KEY}' },
        },
        {
          id: 'claude',
          harness: 'claude',
          model: 'claude-sonnet-4-5',
          args: [],
          slots: 1,
          priority: 2,
          roles: ['coder', 'judge'],
          env: {},
        },
      ],
      setup: 'npm ci',
      gates: ['npm test', 'npm run lint'],
      fixRounds: 2,
      mergeRevisions: 1,
      setupRepair: false,
      setupCache: false,
      tasks: false,
      judge: { executor: 'claude', rounds: 2, deferNonBlocking: false },
      concurrency: 4,
      timeouts: { storyMs: 3_600_000, gateMs: 1_200_000, silenceMs: 900_000 },
      retries: { transient: 3, backoffMs: 2000 },
      budget: { usd: 50, tokens: 20_000_000 },
      board: { project: 'https://github.com/orgs/acme/projects/7' },
      labels: { epic: 'epic' },
      issueTools: { labels: ['needs-docs'], assignees: ['octocat'] },
      allowWorkflowChanges: false,
      prices: {},
      planner: { maxStories: 30, repairRounds: 2, subIssues: false },
      prompt: { startingCode: { budget: 20_000, perFile: 4_000 } },
    });
  });

  it('refuses the epic label among the labels a coder may ask for, in any case', () => {
    expect(problems('issueTools: { labels: [needs-docs, Epic] }')).toEqual([
      'issueTools.labels[1]: expected a label other than the epic label "epic" (an issue with it becomes an epic), got "Epic"',
    ]);
    expect(
      problems('labels: { epic: run-me }\nissueTools: { labels: [run-me], assignees: [7] }'),
    ).toEqual([
      'issueTools.labels[0]: expected a label other than the epic label "run-me" (an issue with it becomes an epic), got "run-me"',
      'issueTools.assignees[0]: expected a GitHub login, got 7',
    ]);
    expect(parseConfig('issueTools: { labels: [epic-docs] }', 'c.yml').issueTools).toEqual({
      labels: ['epic-docs'],
      assignees: [],
    });
  });

  it('reads the retries of transient faults: none at all, or a short backoff in seconds', () => {
    expect(parseConfig('retries: { transient: 0 }', 'c.yml').retries).toEqual({
      transient: 0,
      backoffMs: 2000,
    });
    expect(parseConfig('retries: { transient: 5, backoff: 0.25 }', 'c.yml').retries).toEqual({
      transient: 5,
      backoffMs: 250,
    });
    expect(problems('retries: { transient: -1, backoff: soon, count: 2 }')).toEqual([
      'retries.transient: expected an integer of 0 or more, got -1',
      'retries.backoff: expected a duration like 90s, 20m or 2h, got "soon"',
      'retries.count: unknown key (expected one of: transient, backoff)',
    ]);
  });

  it('reviews with the four default lenses unless review.lenses names others', () => {
    const config = parseConfig(
      'executors: [{ id: a, harness: codex, roles: [coder, reviewer] }]\nreview: {}',
      'c.yml',
    );
    expect(config.review?.role).toBe('reviewer');
    expect(config.review?.rounds).toBe(2);
    expect(config.review?.lenses.map((l) => l.name)).toEqual([
      'correctness',
      'tests',
      'security',
      'house-style',
    ]);
    expect('review' in parseConfig('', 'c.yml')).toBe(false);
  });

  it('leaves optional keys out rather than set to undefined', () => {
    const config = parseConfig('executors: [{ id: a, harness: codex }]\nbudget: {}', 'c.yml');
    expect(Object.keys(config.executors[0] ?? {})).not.toContain('model');
    expect(Object.keys(config.executors[0] ?? {})).not.toContain('command');
    expect(config.budget).toEqual({});
    expect('judge' in config).toBe(false);
    expect('setup' in config).toBe(false);
  });

  it('accepts a command executor, prices and a user board', () => {
    const config = parseConfig(
      [
        'executors:',
        '  - { id: house-agent, harness: command, command: [my-agent, --flag], args: [-v] }',
        'board: { project: https://github.com/users/x/projects/3 }',
        'prices: { gpt-5.6: { input: 1.25, cachedInput: 0.125, cacheWrite: 0, output: 10 } }',
      ].join('\n'),
      'c.yml',
    );
    expect(config.executors[0]?.command).toEqual(['my-agent', '--flag']);
    expect(config.executors[0]?.args).toEqual(['-v']);
    expect(config.board?.project).toBe('https://github.com/users/x/projects/3');
    expect(config.prices['gpt-5.6']).toEqual({
      input: 1.25,
      cachedInput: 0.125,
      cacheWrite: 0,
      output: 10,
    });
  });

  it.each([
    ['90', 90_000],
    ['90s', 90_000],
    ['20m', 1_200_000],
    ['2h', 7_200_000],
    ['1h30m', 5_400_000],
    ['1m30s', 90_000],
    ['1.5', 1_500],
  ])('reads the duration %s as %i ms', (written, ms) => {
    expect(parseConfig(`timeouts: { story: ${written} }`, 'c.yml').timeouts).toEqual({
      storyMs: ms,
      gateMs: 1_200_000,
      silenceMs: 900_000,
    });
  });

  const invalid: [string, string, string][] = [
    ['a misspelt key', 'gatez: [npm test]', 'gatez: unknown key (did you mean "gates"?)'],
    ['a wrongly cased key', 'fixrounds: 1', 'fixrounds: unknown key (did you mean "fixRounds"?)'],
    [
      'an unknown key with no close match',
      'labels: { epic: epic, colour: red }',
      'labels.colour: unknown key (expected one of: epic)',
    ],
    [
      'slots as a word',
      'executors:\n  - { id: a, harness: codex }\n  - { id: b, harness: codex, slots: two }',
      'executors[1].slots: expected a positive integer, got "two"',
    ],
    [
      'zero slots',
      'executors: [{ id: a, harness: codex, slots: 0 }]',
      'executors[0].slots: expected a positive integer, got 0',
    ],
    [
      'a missing id',
      'executors: [{ harness: codex }]',
      'executors[0].id: expected a kebab-case id like "codex", got nothing',
    ],
    [
      'an id that is not kebab-case',
      'executors: [{ id: My_Agent, harness: codex }]',
      'executors[0].id: expected a kebab-case id like "codex", got "My_Agent"',
    ],
    [
      'an unknown harness',
      'executors: [{ id: a, harness: cursor }]',
      'executors[0].harness: expected one of codex, claude, gemini, opencode, aider, command, got "cursor"',
    ],
    [
      'an unknown role',
      'executors: [{ id: a, harness: codex, roles: [coder, boss] }]',
      'executors[0].roles[1]: expected one of coder, judge, verifier, planner, reviewer, got "boss"',
    ],
    [
      'no roles',
      'executors: [{ id: b, harness: codex }, { id: a, harness: codex, roles: [] }]',
      'executors[1].roles: expected at least one role (coder, judge, verifier, planner, reviewer), got a list',
    ],
    [
      'a command harness without command',
      'executors: [{ id: a, harness: command }]',
      'executors[0].command: expected an argv list like ["my-agent", "--flag"] for harness command, got nothing',
    ],
    [
      'an empty command',
      'executors: [{ id: a, harness: command, command: [] }]',
      'executors[0].command: expected a non-empty argv list like ["my-agent", "--flag"], got a list',
    ],
    [
      'a command on another harness',
      'executors: [{ id: a, harness: codex, command: [x] }]',
      'executors[0].command: not allowed with harness codex (only with harness command)',
    ],
    [
      'duplicate executor ids',
      'executors: [{ id: a, harness: codex }, { id: a, harness: claude }]',
      'executors[1].id: expected a unique id, got "a" again (also executors[0])',
    ],
    [
      'a roster without a coder',
      'executors: [{ id: a, harness: claude, roles: [judge] }]',
      'executors: expected at least one executor with role coder, got none',
    ],
    [
      'a judge that is not in the roster',
      'judge: { executor: ghost }',
      'judge.executor: expected the id of an executor with role judge, got "ghost" (no executor has this id)',
    ],
    [
      'a judge without the judge role',
      'executors: [{ id: a, harness: codex }]\njudge: { executor: a }',
      'judge.executor: expected the id of an executor with role judge, got "a" (its roles are coder)',
    ],
    [
      'a judge without executor',
      'judge: { rounds: 1 }',
      'judge.executor: expected the id of an executor with role judge, got nothing',
    ],
    [
      'a review without a reviewer',
      'executors: [{ id: a, harness: codex }]\nreview: {}',
      "review.role: expected an executor with role reviewer to review, got none (add it to an executor's roles)",
    ],
    [
      'two lenses of one name',
      'executors: [{ id: a, harness: codex, roles: [coder, judge] }]\nreview: { role: judge, lenses: [{ name: tests, instruction: a }, { name: tests, instruction: b }] }',
      'review.lenses[1].name: expected a unique lens name, got "tests" again',
    ],
    [
      'a lens without an instruction',
      'executors: [{ id: a, harness: codex, roles: [coder, reviewer] }]\nreview: { lenses: [{ name: tests }] }',
      'review.lenses[0].instruction: expected an instruction for the reviewer, got nothing',
    ],
    [
      'a duration word',
      'timeouts: { story: soon }',
      'timeouts.story: expected a duration like 90s, 20m or 2h, got "soon"',
    ],
    [
      'a duration in the wrong order',
      'timeouts: { gate: 30m1h }',
      'timeouts.gate: expected a duration like 90s, 20m or 2h, got "30m1h"',
    ],
    [
      'a zero duration',
      'timeouts: { gate: 0s }',
      'timeouts.gate: expected a positive duration of at most 24 days, got "0s"',
    ],
    [
      'a negative number of seconds',
      'timeouts: { story: -5 }',
      'timeouts.story: expected a duration like 90s, 20m or 2h, got -5',
    ],
    [
      'a duration too long for a timer',
      'timeouts: { story: 1000h }',
      'timeouts.story: expected a positive duration of at most 24 days, got "1000h"',
    ],
    ['zero concurrency', 'concurrency: 0', 'concurrency: expected a positive integer, got 0'],
    ['negative fix rounds', 'fixRounds: -1', 'fixRounds: expected an integer of 0 or more, got -1'],
    [
      'fractional fix rounds',
      'fixRounds: 1.5',
      'fixRounds: expected an integer of 0 or more, got 1.5',
    ],
    [
      'gates as one string',
      'gates: npm test',
      'gates: expected a list of shell commands, got "npm test"',
    ],
    ['an empty setup', 'setup: ""', 'setup: expected a shell command, got ""'],
    ['a setup left empty', 'setup:', 'setup: expected a shell command, got an empty value'],
    [
      'a negative budget',
      'budget: { usd: -1 }',
      'budget.usd: expected a positive number of US dollars, got -1',
    ],
    [
      'fractional budget tokens',
      'budget: { tokens: 1.5 }',
      'budget.tokens: expected a positive integer, got 1.5',
    ],
    [
      'a board that is not a project URL',
      'board: { project: "https://github.com/acme/projects/7" }',
      'board.project: expected a GitHub Projects URL like https://github.com/orgs/acme/projects/7, got "https://github.com/acme/projects/7"',
    ],
    [
      'a boolean as text',
      'allowWorkflowChanges: "yes"',
      'allowWorkflowChanges: expected true or false, got "yes"',
    ],
    [
      'an incomplete price',
      'prices: { m: { input: 1, cachedInput: 0, output: 2 } }',
      'prices.m.cacheWrite: expected a price of 0 or more (US dollars per million tokens), got nothing',
    ],
    [
      'a price for a dotted model name',
      'prices: { gpt-5.6: { input: 1, cachedInput: 0, cacheWrite: 0, output: -2 } }',
      'prices["gpt-5.6"].output: expected a price of 0 or more (US dollars per million tokens), got -2',
    ],
    [
      'a number in env',
      'executors: [{ id: a, harness: codex, env: { DEBUG: 1 } }]',
      'executors[0].env.DEBUG: expected a string (quote numbers and booleans), got 1',
    ],
    [
      'a bad env name',
      'executors: [{ id: a, harness: codex, env: { my-var: x } }]',
      'executors[0].env.my-var: expected an environment variable name like OPENAI_API_KEY, got key "my-var"',
    ],
    [
      'an EPICFLOW_ variable in env',
      'executors: [{ id: a, harness: command, command: [x], env: { EPICFLOW_ROUND: "9" } }]',
      'executors[0].env.EPICFLOW_ROUND: not allowed: epicflow sets EPICFLOW_* variables itself',
    ],
    [
      'a reference without braces',
      'executors: [{ id: a, harness: codex, env: { KEY: $OPENAI_API_KEY } }]',
      'executors[0].env.KEY: expected references written as ${NAME}, got "$OPENAI_API_KEY"',
    ],
    [
      'an unclosed reference',
      'executors: [{ id: a, harness: codex, env: { KEY: "${OPENAI" } }]',
      'executors[0].env.KEY: expected references written as ${NAME}, got "${OPENAI"',
    ],
    ['a list at the top', '- gates', '(top level): expected a mapping of settings, got a list'],
    [
      'a scalar at the top',
      'just text',
      '(top level): expected a mapping of settings, got "just text"',
    ],
  ];

  it.each(invalid)('rejects %s', (_name, text, line) => {
    expect(problems(text)).toEqual([line]);
  });

  it.each([
    ['OPENAI_API_KEY', 'sk-proj-abc123'],
    ['ANTHROPIC_API_KEY', 'sk-ant-api03-xyz'],
    ['MY_PAT', 'ghp_0123456789abcdef'],
    ['GH_FINE', 'github_pat_11ABCDEF'],
    ['SLACK', 'xoxb-1234-5678'],
    ['AWS_ACCESS_KEY_ID', 'AKIAIOSFODNN7EXAMPLE'],
    ['AUTHORIZATION', 'Bearer sk-abc'],
  ])('rejects the raw secret in env %s without repeating it', (name, secret) => {
    const details = problems(
      `executors: [{ id: a, harness: codex, env: { ${name}: "${secret}" } }]`,
    );
    expect(details).toEqual([
      `executors[0].env.${name}: expected a reference like "\${${name}}", got what looks like a raw secret (never write secrets in the config)`,
    ]);
    expect(details.join('\n')).not.toContain(secret);
  });

  it('keeps literal values and references that are not secrets', () => {
    const config = parseConfig(
      'executors: [{ id: a, harness: codex, env: { MODE: task-runner, AUTH: "Bearer ${TOKEN}", P: "$ " } }]',
      'c.yml',
    );
    expect(config.executors[0]?.env).toEqual({
      MODE: 'task-runner',
      AUTH: 'Bearer ${TOKEN}',
      P: '$ ',
    });
  });

  it.each(['GITHUB_TOKEN', 'GH_TOKEN', 'GH_ENTERPRISE_TOKEN', 'GITHUB_PAT', 'github_token'])(
    'refuses the GitHub token %s in an executor env',
    (name) => {
      expect(problems(`executors: [{ id: a, harness: codex, env: { ${name}: "\${X}" } }]`)).toEqual(
        [`executors[0].env.${name}: not allowed: executors never see a GitHub token`],
      );
    },
  );

  it('refuses a GitHub token passed under another name', () => {
    expect(
      problems('executors: [{ id: a, harness: codex, env: { T: "${GITHUB_TOKEN}" } }]'),
    ).toEqual([
      'executors[0].env.T: not allowed to refer to ${GITHUB_TOKEN}: executors never see a GitHub token',
    ]);
  });

  it('allows GITHUB_ variables that are not tokens', () => {
    const config = parseConfig(
      'executors: [{ id: a, harness: codex, env: { GITHUB_SERVER_URL: https://github.com } }]',
      'c.yml',
    );
    expect(config.executors[0]?.env).toEqual({ GITHUB_SERVER_URL: 'https://github.com' });
  });

  it('reports every problem at once, top to bottom, cross-field checks included', () => {
    const text = [
      'gatez: [npm test]',
      'executors:',
      '  - id: codex',
      '    harness: codex',
      '    slots: two',
      '  - id: codex',
      '    harness: claude',
      '    env: { GITHUB_TOKEN: "${GITHUB_TOKEN}" }',
      'judge: { executor: nobody }',
      'timeouts: { story: soon }',
      'concurrency: 0',
    ].join('\n');
    expect(problems(text, '.github/epicflow.yml')).toEqual([
      'gatez: unknown key (did you mean "gates"?)',
      'executors[0].slots: expected a positive integer, got "two"',
      'executors[1].id: expected a unique id, got "codex" again (also executors[0])',
      'executors[1].env.GITHUB_TOKEN: not allowed: executors never see a GitHub token',
      'judge.executor: expected the id of an executor with role judge, got "nobody" (no executor has this id)',
      'timeouts.story: expected a duration like 90s, 20m or 2h, got "soon"',
      'concurrency: expected a positive integer, got 0',
    ]);
  });

  it('reports a YAML syntax error with its line, and renders without a stack trace', () => {
    let thrown: unknown;
    try {
      parseConfig('gates: [npm test\nfixRounds: 2\n', '.github/epicflow.yml');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(EpicflowError);
    const text = describeError(thrown);
    expect(text).toMatch(/^invalid config in \.github\/epicflow\.yml\n {2}line \d+, column \d+: /);
    expect(text).not.toMatch(/\bat .*\.(ts|js):\d+/);
  });

  it('reports duplicate keys as YAML errors', () => {
    expect(problems('concurrency: 2\nconcurrency: 3\n')).toEqual([
      'line 2, column 1: Map keys must be unique',
    ]);
  });

  it('never fails with anything but a config error, whatever the shape', () => {
    const value = fc.jsonValue({ maxDepth: 3 });
    const executor = fc.record(
      {
        id: value,
        harness: fc.constantFrom('codex', 'command', 'x'),
        command: value,
        env: value,
        roles: value,
      },
      { requiredKeys: [] },
    );
    const config = fc.record(
      {
        executors: fc.oneof(fc.array(fc.oneof(executor, value)), value),
        judge: fc.oneof(fc.record({ executor: value }), value),
        timeouts: value,
        prices: value,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(config, value), (input) => {
        try {
          validateConfig(input, 'c.yml');
        } catch (error) {
          expect(error).toBeInstanceOf(EpicflowError);
          expect((error as EpicflowError).details.length).toBeGreaterThan(0);
        }
      }),
    );
  });
});
