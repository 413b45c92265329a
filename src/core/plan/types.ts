import type { Plan, Story } from '../model.js';

/** The stable violation codes, in the order docs/plan-format.md lists them. */
export const VIOLATION_CODES = [
  'no-plan-block',
  'multiple-plan-blocks',
  'yaml',
  'schema',
  'too-many-stories',
  'invalid-id',
  'duplicate-id',
  'empty-owns',
  'unsafe-path',
  'protected-path',
  'self-dependency',
  'unknown-dependency',
  'cycle',
  'owns-overlap',
  'owns-reads-overlap',
] as const;

export type ViolationCode = (typeof VIOLATION_CODES)[number];

/** One problem found in a plan. `message` names the story and the field. */
export interface Violation {
  readonly code: ViolationCode;
  readonly message: string;
  /** The story's id (or `#N`, its 1-based position, when it has no usable id). */
  readonly story?: string;
  readonly field?: string;
  /** 1-based line in the markdown the plan came from, when known. */
  readonly line?: number;
}

export type PlanResult =
  | { readonly ok: true; readonly plan: Plan; readonly violations: readonly [] }
  | {
      readonly ok: false;
      readonly violations: readonly Violation[];
      /** Story entries found (0 when the block or its `stories` list is unusable). */
      readonly storyCount: number;
    };

export type StoryResult =
  | { readonly ok: true; readonly story: Story; readonly violations: readonly [] }
  | { readonly ok: false; readonly violations: readonly Violation[] };

export interface PlanOptions {
  /** From the config (`allowWorkflowChanges`): stories may own protected paths. */
  readonly allowWorkflowChanges?: boolean;
  /** Config files stories may not own; defaults to `.github/epicflow.yml` and `epicflow.yml`. */
  readonly configPaths?: readonly string[];
}

/** At most this many stories: GitHub allows 100 sub-issues per parent. */
export const MAX_STORIES = 100;
export const MAX_ID_LENGTH = 48;
export const ID_PATTERN = /^[a-z0-9][a-z0-9-]*$/;
