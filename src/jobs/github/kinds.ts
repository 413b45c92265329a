/**
 * Each kind of job of the story workflow (`JobRef['kind']`), the one object the Action's job
 * shell runs for it (job-kind.ts). A new kind is its `JobRef` arm, its file here and one
 * line in this table.
 */
import type { JobRef } from '../../core/epic/index.js';
import type { JobKind } from './job-kind.js';
import { landKind } from './land-kind.js';
import { planKind } from './plan-kind.js';
import { retroKind } from './retro-kind.js';
import { storyKind } from './story-kind.js';

/** Each kind's object, by the kind's name. */
const KINDS: { readonly [K in JobRef['kind']]: JobKind<Extract<JobRef, { kind: K }>> } = {
  story: storyKind,
  plan: planKind,
  retro: retroKind,
  land: landKind,
};

/** The object of the kind `ref` is of. */
export function kindOf(ref: JobRef): JobKind<JobRef> {
  // The table gives each kind its own object: `ref` is of the kind it was looked up by.
  return KINDS[ref.kind] as JobKind<JobRef>;
}
