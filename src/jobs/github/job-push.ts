/**
 * The push of a publish job, made by the job shell (action/shell.ts) once for every kind:
 * the kind describes it (`Pushing`: the branch, how many pushes at most, what each round
 * makes, and the record it ends with from how the push ended: `ended`), and the shell makes it
 * (`makePush`) before it saves that record (job-record.ts). A push is never a force: one
 * with no lease is refused unless it fast-forwards, one with a lease unless the branch is
 * where the lease says. A refused push changed nothing on GitHub, so on a moved branch the
 * round is made again on the new head (`round(n)`, n > 1) and pushed again, at most `max`
 * times; any other refusal ends it.
 */
import type { RemoteGit } from '../../adapters/git/remote-git.js';
import { describePushRefusal, type PushRefusalReason } from '../../core/epic/index.js';
import type { Saving } from './job-record.js';

/** What one round of a job makes: a commit to push (with a lease on the head it was made on), or a stop. */
export type PushRound<T> =
  { readonly push: string; readonly lease?: string } | { readonly stop: T };

/** How a job's push ended, after `pushes` pushes. */
export type PushOutcome<T> =
  | { readonly kind: 'pushed'; readonly sha: string; readonly pushes: number }
  | { readonly kind: 'stopped'; readonly value: T; readonly pushes: number }
  | {
      readonly kind: 'refused';
      /** Why GitHub refused it, as the git adapter tells it. */
      readonly refused: Exclude<PushRefusalReason, 'stale'>;
      /** The refusal with what to do about it. */
      readonly reason: string;
      readonly pushes: number;
    }
  /** The branch moved again before each of `max` pushes. */
  | { readonly kind: 'kept-moving'; readonly pushes: number };

/** The one push of a job's result to a branch other jobs move too. */
async function pushAgainOnMove<T>(
  remote: Pick<RemoteGit, 'push'>,
  branch: string,
  max: number,
  round: (n: number) => Promise<PushRound<T>>,
): Promise<PushOutcome<T>> {
  for (let n = 1; ; n++) {
    const made = await round(n);
    if ('stop' in made) return { kind: 'stopped', value: made.stop, pushes: n - 1 };
    const pushed = await remote.push(made.push, branch, made.lease);
    if (pushed.ok) return { kind: 'pushed', sha: made.push, pushes: n };
    if (pushed.reason !== 'stale') {
      return {
        kind: 'refused',
        refused: pushed.reason,
        reason: describePushRefusal(branch, pushed.reason, pushed.detail),
        pushes: n,
      };
    }
    if (n >= max) return { kind: 'kept-moving', pushes: n };
  }
}

/**
 * A publish job's push, described by its kind (`pushing`): the shell makes it (`makePush`),
 * then saves the record the kind made from how the push ended.
 */
export class Pushing<R> {
  constructor(readonly push: () => Promise<Saving<R>>) {}
}

/**
 * The push of `round`'s commits to `branch`, at most `max` pushes on a branch that keeps
 * moving, and the record `ended` makes from how it ended (`T`: what a round stops with
 * instead of a push).
 */
export function pushing<T, R>(
  remote: Pick<RemoteGit, 'push'>,
  branch: string,
  max: number,
  round: (n: number) => Promise<PushRound<T>>,
  ended: (outcome: PushOutcome<T>) => Promise<Saving<R>>,
): Pushing<R> {
  return new Pushing(async () => ended(await pushAgainOnMove(remote, branch, max, round)));
}

/** The push a kind described, made; the record its kind made from how it ended, to be saved. */
export function makePush<R>(described: Pushing<R>): Promise<Saving<R>> {
  return described.push();
}
