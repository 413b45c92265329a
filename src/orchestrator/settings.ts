/**
 * The settings of one event's handling, each defaulted once, where the use case is
 * entered (`handleEpicEvent`, and a planning job's own decision): the story workflow's
 * file name, the clock, and the default branch — the one the event told, or read from
 * GitHub once, when first needed (an event ignored early costs no request for it).
 */
import { DEFAULT_STORY_WORKFLOW, type OrchestratorDeps } from './types.js';

export interface SettledDeps extends Omit<
  OrchestratorDeps,
  'defaultBranch' | 'storyWorkflow' | 'now'
> {
  /** The repository's default branch (read at most once). */
  readonly defaultBranch: () => Promise<string>;
  readonly storyWorkflow: string;
  readonly now: () => Date;
}

export function settle(deps: OrchestratorDeps): SettledDeps {
  const { defaultBranch: given, storyWorkflow, now, ...rest } = deps;
  let read: Promise<string> | undefined;
  const defaultBranch = (): Promise<string> => {
    if (given !== undefined) return Promise.resolve(given);
    // A failed read is not kept: the next step that needs the branch asks again.
    read ??= deps.repo.defaultBranch().catch((e: unknown) => {
      read = undefined;
      throw e;
    });
    return read;
  };
  return {
    ...rest,
    defaultBranch,
    storyWorkflow: storyWorkflow ?? DEFAULT_STORY_WORKFLOW,
    now: now ?? (() => new Date()),
  };
}
