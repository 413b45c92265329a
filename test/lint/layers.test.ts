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

const LAYER_RULES = new Set(['no-restricted-imports', 'no-restricted-syntax']);

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

  it('lets the GitHub adapter use its client', async () => {
    const own = call.replace('../adapters/github/index.js', '../repo.js');
    expect(await refusals('src/adapters/github/resources/ok.ts', own)).toEqual([]);
  });
});
