import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Octokit } from '@octokit/rest';
import { octokitFor } from './client.js';
import { startGitHubDouble, type GitHubDouble } from './index.js';
import { runNaming } from './run-name.js';

const owner = 'acme';
const repo = 'shop';

const STORY = [
  'name: epicflow story',
  'run-name: epicflow epic ${{ inputs.epic }} story ${{ inputs.story }} attempt ${{ inputs.attempt }}',
  'on:',
  '  workflow_dispatch:',
  '    inputs:',
  '      epic: { type: string, required: true }',
  '      story: { type: string, required: true }',
  '      attempt: { type: string, required: true }',
  'jobs: {}',
  '',
].join('\n');

let gh: GitHubDouble;
let octokit: Octokit;

beforeAll(async () => {
  gh = await startGitHubDouble();
  const alice = gh.seed.user({ login: 'alice', permission: 'write' });
  await gh.seed.repo({
    owner,
    name: repo,
    files: {
      '.github/workflows/story.yml': STORY,
      '.github/workflows/plain.yml': 'on: workflow_dispatch\njobs: {}\n',
      '.github/workflows/named.yml': 'name: Nightly\non: workflow_dispatch\njobs: {}\n',
    },
  });
  octokit = octokitFor(gh, alice.token);
});
afterAll(() => gh.close());

async function dispatch(workflow: string, inputs?: Record<string, string>, ref = 'main') {
  const res = await octokit.rest.actions.createWorkflowDispatch({
    owner,
    repo,
    workflow_id: workflow,
    ref,
    ...(inputs === undefined ? {} : { inputs }),
    return_run_details: true,
  });
  const runId = (res.data as { workflow_run_id: number }).workflow_run_id;
  gh.act.completeWorkflowRun(runId, 'success');
  await gh.idle();
  const { data } = await octokit.rest.actions.getWorkflowRun({ owner, repo, run_id: runId });
  const hooks = gh.deliveries
    .filter((d) => d.event === 'workflow_run')
    .map((d) => d.payload['workflow_run'] as { id: number; display_title: string })
    .filter((r) => r.id === runId);
  return { run: data, hookTitles: hooks.map((h) => h.display_title) };
}

describe('run names of dispatched runs', () => {
  it('evaluates the workflow’s run-name with the dispatch inputs, in the run and its webhooks', async () => {
    const { run, hookTitles } = await dispatch('story.yml', {
      epic: '12',
      story: 'cart',
      attempt: '2',
    });
    expect(run.name).toBe('epicflow story');
    expect(run.display_title).toBe('epicflow epic 12 story cart attempt 2');
    // requested and completed
    expect(hookTitles).toEqual([
      'epicflow epic 12 story cart attempt 2',
      'epicflow epic 12 story cart attempt 2',
    ]);
  });

  it('titles a run without run-name by its workflow’s name, or its file name without one', async () => {
    expect((await dispatch('named.yml')).run.display_title).toBe('Nightly');
    const plain = await dispatch('plain.yml');
    expect([plain.run.name, plain.run.display_title]).toEqual(['plain.yml', 'plain.yml']);
  });

  it('reads the workflow file at the dispatched ref', async () => {
    const main = await octokit.rest.git.getRef({ owner, repo, ref: 'heads/main' });
    await octokit.rest.git.createRef({
      owner,
      repo,
      ref: 'refs/heads/other',
      sha: main.data.object.sha,
    });
    const { data: current } = await octokit.rest.repos.getContent({
      owner,
      repo,
      path: '.github/workflows/plain.yml',
      ref: 'other',
    });
    await octokit.rest.repos.createOrUpdateFileContents({
      owner,
      repo,
      path: '.github/workflows/plain.yml',
      branch: 'other',
      message: 'name runs',
      content: Buffer.from('run-name: on other\non: workflow_dispatch\njobs: {}\n').toString(
        'base64',
      ),
      sha: (current as { sha: string }).sha,
    });
    expect((await dispatch('plain.yml', undefined, 'other')).run.display_title).toBe('on other');
    expect((await dispatch('plain.yml', undefined, 'main')).run.display_title).toBe('plain.yml');
  });
});

describe('runNaming', () => {
  const wf = (runName: string): string =>
    [
      `run-name: ${JSON.stringify(runName)}`,
      'on:',
      '  workflow_dispatch:',
      '    inputs:',
      '      who: { default: nobody }',
      'jobs: {}',
    ].join('\n');

  it('evaluates github.event.inputs like inputs, tolerates spaces inside ${{ }}', () => {
    expect(
      runNaming(wf('${{github.event.inputs.a}}-${{  inputs.b  }}'), 'x.yml', { a: '1', b: 2 })
        .displayTitle,
    ).toBe('1-2');
  });

  it('uses an input’s declared default when the dispatch leaves it out, empty when none', () => {
    expect(runNaming(wf('by ${{ inputs.who }} for ${{ inputs.what }}'), 'x.yml', {})).toEqual({
      name: 'x.yml',
      displayTitle: 'by nobody for ',
    });
  });

  it('keeps expressions it does not evaluate as written', () => {
    expect(
      runNaming(wf('${{ github.actor }} ran ${{ inputs.who }}'), 'x.yml', { who: 'ci' })
        .displayTitle,
    ).toBe('${{ github.actor }} ran ci');
  });

  it('titles a run of an unparsable workflow by its file name', () => {
    expect(runNaming('on: [', '.github/workflows/bad.yml', {})).toEqual({
      name: 'bad.yml',
      displayTitle: 'bad.yml',
    });
  });
});
