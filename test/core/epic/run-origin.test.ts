/**
 * Only a dispatch of the story workflow on the default branch of the repository
 * itself is a story run; each way of faking one differs in one fact.
 */
import { describe, expect, it } from '@jest/globals';
import { checkStoryRun, type RunOrigin } from '../../../src/core/epic/index.js';

const SELF = { id: 10, fullName: 'acme/shop' };
const SOURCE = {
  repository: { fullName: 'acme/shop', id: 10 },
  workflowPath: '.github/workflows/epicflow-story.yml',
  defaultBranch: 'main',
};
const GENUINE: RunOrigin = {
  event: 'workflow_dispatch',
  path: '.github/workflows/epicflow-story.yml',
  headBranch: 'main',
  repository: SELF,
  headRepository: SELF,
};

describe('checkStoryRun', () => {
  it('accepts a dispatch of the story workflow on the default branch of the repository itself', () => {
    expect(checkStoryRun(GENUINE, SOURCE)).toEqual({ ok: true });
    // Names compare as GitHub does, without case; the id is checked when the caller knows it.
    const shouty = { ...GENUINE, repository: { id: 10, fullName: 'Acme/Shop' } };
    expect(checkStoryRun({ ...shouty, headRepository: shouty.repository }, SOURCE)).toEqual({
      ok: true,
    });
    const noId = { ...SOURCE, repository: { fullName: 'acme/shop' } };
    expect(checkStoryRun(GENUINE, noId)).toEqual({ ok: true });
  });

  it.each<[string, Partial<RunOrigin>, string]>([
    [
      'a fork’s pull request',
      { event: 'pull_request', headRepository: { id: 99, fullName: 'mallory/shop' } },
      'it was started by a "pull_request" event, not by a workflow_dispatch',
    ],
    [
      'a push to another branch with a copy of the workflow',
      { event: 'push', headBranch: 'copy' },
      'it was started by a "push" event, not by a workflow_dispatch',
    ],
    [
      'a dispatch of another workflow with the same run-name',
      { path: '.github/workflows/other.yml' },
      'its workflow is ".github/workflows/other.yml", not .github/workflows/epicflow-story.yml',
    ],
    [
      'a dispatch on another branch',
      { headBranch: 'copy' },
      'it ran from branch "copy", not from the default branch main',
    ],
    [
      'a run without a branch',
      { headBranch: null },
      'it ran from no branch, not from the default branch main',
    ],
    [
      'a run of another repository',
      { repository: { id: 11, fullName: 'acme/other' } },
      'it belongs to "acme/other" (id 11), not to acme/shop',
    ],
    [
      'a run of a repository of the same name with another id (deleted and re-created)',
      {
        repository: { id: 12, fullName: 'acme/shop' },
        headRepository: { id: 12, fullName: 'acme/shop' },
      },
      'it belongs to "acme/shop" (id 12), not to acme/shop',
    ],
    [
      'a dispatch whose code came from a fork',
      { headRepository: { id: 99, fullName: 'mallory/shop' } },
      'its code came from "mallory/shop" (id 99), not from acme/shop',
    ],
    [
      'a run whose head repository is unknown',
      { headRepository: null },
      'its code came from no repository, not from acme/shop',
    ],
  ])('refuses %s', (_what, change, reason) => {
    expect(checkStoryRun({ ...GENUINE, ...change }, SOURCE)).toEqual({ ok: false, reason });
  });

  it('quotes text from the run, so a branch name cannot pass for our words', () => {
    const check = checkStoryRun(
      { ...GENUINE, headBranch: 'x", not from the default branch main' },
      SOURCE,
    );
    expect(check).toEqual({
      ok: false,
      reason:
        'it ran from branch "x\\", not from the default branch main", not from the default branch main',
    });
  });
});
