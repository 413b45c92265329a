/**
 * epicflow's writes to branches on GitHub, as people read them: the identity its
 * commits carry, and why a push was refused with what to do about it. One text for the
 * story job and the land job.
 */
import { oneLine } from '../errors.js';

/** Why GitHub refused a push (adapters/git/remote-git.ts tells them apart). */
export type PushRefusalReason = 'stale' | 'protected' | 'auth' | 'other';

/** The commit identity of epicflow's login (`epicflow[bot]` → `epicflow@users.noreply.github.com`). */
export function botCommitIdentity(botLogin: string): { name: string; email: string } {
  return { name: botLogin, email: `${botLogin.replace(/\[bot\]$/, '')}@users.noreply.github.com` };
}

/** The reason a push of `branch` was refused, with the next step where there is one. */
export function describePushRefusal(
  branch: string,
  reason: Exclude<PushRefusalReason, 'stale'>,
  detail: string,
): string {
  const told = oneLine(detail);
  switch (reason) {
    case 'protected':
      return `GitHub refused the push to ${branch}: the branch is protected; allow the epicflow App (or the token's user) as a bypass actor in the branch's ruleset, or leave epic branches unprotected (${told})`;
    case 'auth':
      return `GitHub refused the push to ${branch} (token rejected or without Contents: write): ${told}`;
    case 'other':
      return `GitHub refused the push to ${branch} (push failed): ${told}`;
  }
}
