/**
 * The epic's owner: the login that opened it. The App and the story jobs may act
 * as different logins (the App's bot, github-actions[bot], a PAT's user), yet all
 * of them must find the same sub-issues and sticky comments, so the first decision
 * records its login in the epic document and every later writer recognises that
 * login's marked issues and comments as the epic's besides its own. Nobody else's
 * markers count: a user could plant one.
 */
import type { EpicView, GitHubRepo, GitHubStateStore } from '../adapters/github/index.js';
import type { Trigger } from '../core/epic/index.js';
import { EpicflowError } from '../core/errors.js';
import type { StoryRecord } from '../core/model.js';
import type { EpicDoc } from '../core/epic/epic-doc.js';
import { EPIC_DOC } from './epic-doc.js';

/** A GitHub login, users' or apps' (`name[bot]`). */
const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$/;

/** The epic document as the decision's view read it (no request); undefined when there is none. */
export function epicDocOf(store: GitHubStateStore, view: EpicView): EpicDoc | undefined {
  if (view.epicDoc === undefined) return undefined;
  const doc = store.parseJson<EpicDoc | null>(EPIC_DOC, view.epicDoc.text);
  const owner: unknown = doc?.owner;
  if (owner !== undefined && (typeof owner !== 'string' || !LOGIN.test(owner))) {
    throw new EpicflowError(
      'state',
      `GitHub state: ${store.docPath(EPIC_DOC)} on branch ${store.branch} of ${store.repo.fullName}: ` +
        `owner must be a GitHub login, got ${JSON.stringify(owner)}; fix or delete the field`,
    );
  }
  return doc ?? undefined;
}

/** The repository as this decision writes to the epic: its own login and the owner's. */
export function epicRepo(repo: GitHubRepo, doc: EpicDoc | undefined): GitHubRepo {
  return repo.withPeer(doc?.owner);
}

/**
 * The login this decision records as the epic's owner, when none is recorded yet: at
 * the epic's first decision, or at a decision people caused on an epic opened before
 * owners were recorded (a story job's decision then cannot tell who opened it, so it
 * does not claim). Written with the decision's other changes of the epic document
 * (`updateEpicDoc`), once per epic.
 */
export function ownerClaim(input: {
  readonly doc: EpicDoc | undefined;
  readonly login: string;
  readonly trigger: Trigger;
  readonly records: Readonly<Record<string, StoryRecord>>;
}): string | undefined {
  if (input.doc?.owner !== undefined) return undefined;
  const started = Object.keys(input.records).length > 0;
  if (started && input.trigger.kind === 'workflow_run') return undefined;
  return input.login;
}
