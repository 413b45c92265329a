/**
 * The layers hold because lint rejects an import across them (eslint.config.js;
 * docs/architecture.md draws them). Each rule is run here, with the project's own
 * configuration, on a small file placed where it applies: what it must refuse, and
 * what the layer may still do.
 */
import { describe, expect, it } from '@jest/globals';
import { ESLint } from 'eslint';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
// The project's own configuration, read by ESLint as `npx eslint .` reads it.
const eslint = new ESLint({ cwd: root, overrideConfigFile: join(root, 'eslint.config.js') });

const LAYER_RULES = new Set([
  'no-restricted-imports',
  'no-restricted-syntax',
  'no-restricted-globals',
  'no-restricted-properties',
]);

/** The layer rules' messages for `code` as the file `file` of the repository. */
async function refusals(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  const messages = result?.messages ?? [];
  const fatal = messages.filter((m) => m.fatal === true);
  expect(fatal).toEqual([]);
  return messages.filter((m) => LAYER_RULES.has(m.ruleId ?? '')).map((m) => m.message);
}

describe('src/engine: use cases import their ports and src/core only', () => {
  it.each([
    ['an adapter', "import { Git } from '../adapters/git/git.js';"],
    ['the composition', "import { composeEpic } from '../composition/epic.js';"],
    ['the GitHub side', "import { loadPlan } from '../orchestrator/load.js';"],
    ['the CLI', "import { exitCodeFor } from '../cli/context.js';"],
    ['the Action', "import { runStoryMode } from '../action/story.js';"],
    ['the App', "import app from '../app/index.js';"],
    ['execa', "import { execa } from 'execa';"],
    ['octokit', "import { Octokit } from '@octokit/rest';"],
  ])('refuses %s', async (_what, line) => {
    const found = await refusals('src/engine/bad.ts', `${line}\nexport const used = [${'x'}];\n`);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain('src/engine holds the use cases');
  });

  it.each([
    ['node:fs', "import { realpathSync } from 'node:fs';"],
    ['node:fs/promises', "import { readFile } from 'node:fs/promises';"],
    ['fs', "import { readFileSync } from 'fs';"],
    ['node:child_process', "import { spawn } from 'node:child_process';"],
    ['@actions/core', "import * as core from '@actions/core';"],
  ])('refuses %s: files and processes are reached through ports', async (_what, line) => {
    const found = await refusals('src/engine/bad.ts', `${line}\n`);
    expect(found).toEqual([expect.stringContaining('src/engine holds the use cases')]);
  });

  it.each([
    ['an adapter', "await import('../adapters/git/git.js')"],
    ['a module named at run time', 'await import(`../adapters/${name}.js`)'],
  ])('refuses a dynamic import of %s', async (_what, expression) => {
    const code = [
      'export async function load(name: string): Promise<unknown> {',
      `  return ${expression};`,
      '}',
    ].join('\n');
    const found = await refusals('src/engine/bad.ts', `${code}\n`);
    expect(found).toEqual([expect.stringContaining('it loads nothing at run time')]);
  });

  it('lets it import core and its own ports', async () => {
    const code = [
      "import type { Plan } from '../core/model.js';",
      "import type { GitPort } from './ports.js';",
      "import { join } from 'node:path';",
      'export type Both = [Plan, GitPort];',
      'export const j = join;',
    ].join('\n');
    expect(await refusals('src/engine/ok.ts', code)).toEqual([]);
  });
});

describe('src/adapters: they implement ports, they do not use use cases', () => {
  it.each([
    ['a use case', "import { runStory } from '../../engine/story.js';"],
    ['the composition', "import { composeEpic } from '../../composition/epic.js';"],
    ['the GitHub side', "import { handleEpicEvent } from '../../orchestrator/index.js';"],
    ['an entry', "import { exitCodeFor } from '../../cli/context.js';"],
  ])('refuses %s', async (_what, line) => {
    const found = await refusals('src/adapters/git/bad.ts', `${line}\n`);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain('src/adapters implement ports');
  });

  it("lets one import the engine's port types, core and another adapter", async () => {
    const code = [
      "import type { GitPort } from '../../engine/ports.js';",
      "import { EpicflowError } from '../../core/errors.js';",
      "import { runProcess } from '../process/run-process.js';",
      'export type P = GitPort;',
      'export const used = [EpicflowError, runProcess];',
    ].join('\n');
    expect(await refusals('src/adapters/git/ok.ts', code)).toEqual([]);
  });
});

describe('src/composition and src/orchestrator import no entry', () => {
  it('refuses the GitHub side and the entries in the composition', async () => {
    for (const line of [
      "import { loadPlan } from '../orchestrator/load.js';",
      "import { runStoryMode } from '../action/story.js';",
    ]) {
      const found = await refusals('src/composition/bad.ts', `${line}\n`);
      expect(found).toEqual([expect.stringContaining('src/composition wires adapters')]);
    }
  });

  it('lets the composition wire adapters into the engine', async () => {
    const code = [
      "import { gitPort } from '../adapters/git/port.js';",
      "import { openEpic } from '../engine/run-epic.js';",
      'export const used = [gitPort, openEpic];',
    ].join('\n');
    expect(await refusals('src/composition/ok.ts', code)).toEqual([]);
  });

  it.each([
    ['src/orchestrator/bad.ts', "import { Octokit } from '@octokit/rest';", 'src/orchestrator is'],
    ['src/orchestrator/bad.ts', "import * as core from '@actions/core';", 'src/orchestrator is'],
    ['src/composition/bad.ts', "import { Octokit } from '@octokit/rest';", 'src/composition wires'],
    ['src/composition/bad.ts', "import * as core from '@actions/core';", 'src/composition wires'],
  ])('refuses in %s: %s', async (file, line, message) => {
    expect(await refusals(file, `${line}\n`)).toEqual([expect.stringContaining(message)]);
  });

  it('refuses an entry in the orchestrator, and lets it use the composition', async () => {
    expect(
      await refusals('src/orchestrator/bad.ts', "import app from '../app/index.js';\n"),
    ).toEqual([expect.stringContaining('src/orchestrator is the GitHub side')]);
    expect(
      await refusals(
        'src/orchestrator/ok.ts',
        "import { composeEpic } from '../composition/epic.js';\nexport const used = composeEpic;\n",
      ),
    ).toEqual([]);
  });
});

describe("src/jobs: each host's jobs in a folder of their own, imported by the entries only", () => {
  it.each([
    ['src/jobs/github/bad.ts', "import { runLocalJob } from '../local/job-shell.js';"],
    ['src/jobs/local/bad.ts', "import { openJob } from '../github/job-shell.js';"],
    ['src/jobs/github/bad.ts', "import { runStoryMode } from '../../action/story.js';"],
    ['src/jobs/local/bad.ts', "import { exitCodeFor } from '../../cli/context.js';"],
    ['src/jobs/github/bad.ts', "import * as core from '@actions/core';"],
    ['src/jobs/github/bad.ts', "import { Octokit } from '@octokit/rest';"],
  ])('refuses in %s: %s', async (file, line) => {
    expect(await refusals(file, `${line}\n`)).toEqual([
      expect.stringContaining("src/jobs holds each host's jobs"),
    ]);
  });

  it.each([
    ['src/orchestrator/bad.ts', 'src/orchestrator is the GitHub side'],
    ['src/composition/bad.ts', 'src/composition wires adapters'],
    ['src/engine/bad.ts', 'src/engine holds the use cases'],
    ['src/adapters/git/bad.ts', 'src/adapters implement ports'],
    ['src/core/epic/bad.ts', 'src/core is pure'],
  ])('refuses a job in %s', async (file, message) => {
    const up = file.split('/').length - 2;
    const line = `import { openJob } from '${'../'.repeat(up)}jobs/github/job-shell.js';`;
    expect(await refusals(file, `${line}\n`)).toEqual([expect.stringContaining(message)]);
  });

  it('lets a job use the decision loop, the composition, the engine, an adapter and core', async () => {
    const code = [
      "import { readView } from '../../orchestrator/load.js';",
      "import { executorLookup } from '../../composition/epic.js';",
      "import type { ExecutorLookup } from '../../engine/ports.js';",
      "import { Git } from '../../adapters/git/index.js';",
      "import { EpicflowError } from '../../core/errors.js';",
      "import { sayScrubbed } from './job-shell.js';",
      'export type L = ExecutorLookup;',
      'export const used = [readView, executorLookup, Git, EpicflowError, sayScrubbed];',
    ].join('\n');
    expect(await refusals('src/jobs/github/ok.ts', code)).toEqual([]);
    expect(await refusals('src/jobs/local/ok.ts', code)).toEqual([]);
  });

  it('lets an entry run a job', async () => {
    const code =
      "import { openJob } from '../jobs/github/job-shell.js';\nexport const used = openJob;\n";
    expect(await refusals('src/action/ok.ts', code)).toEqual([]);
  });
});

describe('src/core stays pure', () => {
  it.each([
    ['the engine', "import { runStory } from '../../engine/story.js';"],
    ['the GitHub side', "import { loadPlan } from '../../orchestrator/load.js';"],
    ['the composition', "import { composeEpic } from '../../composition/epic.js';"],
    ['an adapter', "import { Git } from '../../adapters/git/git.js';"],
    ['node:fs', "import { readFileSync } from 'node:fs';"],
  ])('refuses %s', async (_what, line) => {
    const found = await refusals('src/core/epic/bad.ts', `${line}\n`);
    expect(found).toEqual([expect.stringContaining('src/core is pure')]);
  });
});

describe('src/core stays pure: no process, no clock, no network', () => {
  it.each([
    ['the process global', 'export const home = process.env.HOME;'],
    ['globalThis.process', 'export const home = globalThis.process.env.HOME;'],
    ['node:process', "import { env } from 'node:process';\nexport const home = env.HOME;"],
    ['the clock', 'export const stamp = (): number => Date.now();'],
    ['fetch', "export const get = (): Promise<Response> => fetch('https://example.com');"],
    [
      'globalThis.fetch',
      "export const get = (): Promise<Response> => globalThis.fetch('https://example.com');",
    ],
  ])('refuses %s', async (_what, code) => {
    const found = await refusals('src/core/epic/bad.ts', `${code}\n`);
    expect(found).toEqual([expect.stringContaining('src/core is pure')]);
  });

  it('lets it compute with a time it is given', async () => {
    const code = 'export const later = (now: string): number => Date.parse(now) + 60_000;\n';
    expect(await refusals('src/core/epic/ok.ts', code)).toEqual([]);
  });
});

describe('the entries import one another not at all', () => {
  const lines: Record<string, string> = {
    app: "import app from '../app/index.js';",
    action: "import { runStoryMode } from '../action/story.js';",
    cli: "import { exitCodeFor } from '../cli/context.js';",
  };
  it.each([
    ['app', 'action'],
    ['app', 'cli'],
    ['action', 'app'],
    ['action', 'cli'],
    ['cli', 'app'],
    ['cli', 'action'],
  ])('refuses src/%s importing src/%s', async (entry, other) => {
    const found = await refusals(`src/${entry}/bad.ts`, `${lines[other] ?? ''}\n`);
    expect(found).toEqual([expect.stringContaining('are separate entries')]);
  });

  it('lets an entry use its own files, the orchestrator and the composition', async () => {
    const code = [
      "import { readInputs } from './inputs.js';",
      "import { handleEpicEvent } from '../orchestrator/index.js';",
      "import { composeEpic } from '../composition/epic.js';",
      'export const used = [readInputs, handleEpicEvent, composeEpic];',
    ].join('\n');
    expect(await refusals('src/action/ok.ts', code)).toEqual([]);
  });
});

describe('only src/adapters/github talks to the GitHub API', () => {
  const call = [
    "import type { GitHubRepo } from '../adapters/github/index.js';",
    'export async function issue(repo: GitHubRepo): Promise<unknown> {',
    '  return repo.octokit.rest.issues.get({ owner: repo.owner, repo: repo.repo, issue_number: 1 });',
    '}',
  ].join('\n');
  const taken = [
    "import type { GitHubRepo } from '../adapters/github/index.js';",
    'export function client(repo: GitHubRepo): unknown {',
    '  const { octokit } = repo;',
    '  return octokit;',
    '}',
  ].join('\n');

  it.each([
    ['src/orchestrator/bad.ts'],
    ['src/action/bad.ts'],
    ['src/app/bad.ts'],
    ['src/adapters/git/bad.ts'],
  ])('refuses .octokit in %s, and taking it apart', async (file) => {
    expect(await refusals(file, call)).toEqual([
      expect.stringContaining('Only src/adapters/github talks to the GitHub API'),
    ]);
    expect(await refusals(file, taken)).toEqual([
      expect.stringContaining('Only src/adapters/github talks to the GitHub API'),
    ]);
  });

  it('refuses .octokit in the engine too, beside its own rule on dynamic imports', async () => {
    const code = 'export const client = (repo: { octokit: unknown }): unknown => repo.octokit;\n';
    expect(await refusals('src/engine/bad.ts', code)).toEqual([
      expect.stringContaining('Only src/adapters/github talks to the GitHub API'),
    ]);
  });

  it('lets the GitHub adapter use its client', async () => {
    const own = call.replace('../adapters/github/index.js', '../repo.js');
    expect(await refusals('src/adapters/github/resources/ok.ts', own)).toEqual([]);
  });
});
