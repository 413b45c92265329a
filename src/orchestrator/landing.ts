/**
 * Keeping epics mergeable on GitHub (docs/landing.md): a push to the default branch
 * starts a `land-<n>` job for each epic whose pull request is open (queued behind a
 * landing that runs, never doubled); a finished `land-<n>` run that recorded nothing is
 * marked so and holds the epic, and the queued landing starts. The job itself is the
 * story workflow with `story: land-<n>` (land-job.ts). The decisions are the core's
 * (core/epic/landing.ts); every write is a compare-and-swap on the landing log.
 */
import { GitHubStateStore } from '../adapters/github/index.js';
import { Landings } from '../adapters/github/resources/landing.js';
import type { EpicDoc } from '../core/epic/epic-doc.js';
import { jobInputs } from '../core/epic/index.js';
import {
  decideLanding,
  LAND_DOC,
  landHalt,
  landRunEnded,
  type LandingDecision,
} from '../core/epic/landing.js';
import { EpicflowError } from '../core/errors.js';
import { readLandLog, type LandLog } from '../core/land/index.js';
import { epicBranchName } from '../core/model.js';
import { EPIC_DOC, updateEpicDoc } from './epic-doc.js';
import { withEpicLock } from './lock.js';
import type { SettledDeps } from './settings.js';
import type { EpicEvent, HandleResult } from './types.js';

/** Compare-and-swap rounds on the landing log before giving up. */
const MAX_WRITES = 5;

/** The epic's landing log and its blob sha (null: none yet). */
export async function readLanding(
  store: GitHubStateStore,
): Promise<{ log: LandLog; sha: string | null }> {
  const doc = await store.readJson<unknown>(LAND_DOC);
  return {
    log: readLandLog(doc?.value ?? null, store.docPath(LAND_DOC)),
    sha: doc?.sha ?? null,
  };
}

/**
 * A push. Only one to the default branch concerns epics; its head is read from GitHub
 * (a payload's `after` is not taken for it), so a forged or redelivered push starts
 * nothing that was not due.
 */
export async function handlePush(
  deps: SettledDeps,
  event: Extract<EpicEvent, { kind: 'push' }>,
): Promise<HandleResult> {
  const { repo } = deps;
  const defaultBranch = await deps.defaultBranch();
  if (event.ref !== `refs/heads/${defaultBranch}`) {
    return { outcome: 'ignored', reason: 'not a push to the default branch', dispatched: [] };
  }
  if (event.deleted) return { outcome: 'ignored', reason: 'a branch deletion', dispatched: [] };
  const intoHead = await repo.getBranchSha(defaultBranch);
  if (intoHead === null) {
    return { outcome: 'ignored', reason: `${defaultBranch} does not exist`, dispatched: [] };
  }
  const epics = await new Landings(repo).openEpicPulls(defaultBranch);
  const dispatched: string[] = [];
  for (const { epic } of epics) {
    const started = await ensureLanding(deps, { epic, defaultBranch, intoHead });
    if (started !== null) dispatched.push(`${started}#1`);
  }
  if (epics.length === 0) {
    return { outcome: 'ignored', reason: 'no epic pull request is open', dispatched: [] };
  }
  return {
    outcome: 'reconciled',
    ...(epics.length === 1 ? { epic: epics[0]?.epic ?? 0 } : {}),
    dispatched,
  };
}

/**
 * One epic's landing for `intoHead`: started (the job's id), queued, or not needed
 * (null). Under the epic's lock, so a decision of the same process never races it.
 */
async function ensureLanding(
  deps: SettledDeps,
  input: { epic: number; defaultBranch: string; intoHead: string },
): Promise<string | null> {
  return withEpicLock(`${deps.repo.fullName}#${input.epic}`, () => startLanding(deps, input));
}

/** `ensureLanding` for a caller that holds the epic's lock. */
async function startLanding(
  deps: SettledDeps,
  input: { epic: number; defaultBranch: string; intoHead: string },
): Promise<string | null> {
  const { repo } = deps;
  const store = new GitHubStateStore({
    repo,
    epic: String(input.epic),
    defaultBranch: input.defaultBranch,
  });
  const epicBranch = epicBranchName(String(input.epic));
  const decision = await writeDecision(store, async (log) => {
    const doc = (await store.readJson<EpicDoc>(EPIC_DOC))?.value;
    const pr = await repo.findOpenPr(epicBranch, input.defaultBranch);
    return decideLanding({
      log,
      epicBranch,
      into: input.defaultBranch,
      intoHead: input.intoHead,
      epicHead: await repo.getBranchSha(epicBranch),
      prOpen: pr !== null,
      landed: doc?.landed !== undefined,
      halt: doc?.halt,
      now: deps.now().toISOString(),
    });
  });
  if (decision.kind === 'none') {
    deps.log?.info(`epic #${input.epic}: no landing (${decision.reason})`);
    return null;
  }
  if (decision.kind === 'queue') {
    deps.log?.info(`epic #${input.epic}: landing of ${input.intoHead.slice(0, 12)} queued`);
    return null;
  }
  await dispatchLanding(deps, store, input, decision.record.job);
  return decision.record.job;
}

/**
 * Before the epic's pull request is marked ready: when the default branch has commits the
 * epic branch lacks (a push epicflow did not hear), a landing brings them in first (or
 * waits for the one running). True when the pull request stays a draft for now; the end
 * of the landing decides again. The caller holds the epic's lock.
 */
export async function landBeforeReady(
  deps: SettledDeps,
  input: { epic: number; defaultBranch: string },
): Promise<boolean> {
  const epicBranch = epicBranchName(String(input.epic));
  const missing = await new Landings(deps.repo).missingFrom(epicBranch, input.defaultBranch);
  if (missing === 0) return false;
  const intoHead = await deps.repo.getBranchSha(input.defaultBranch);
  if (intoHead === null) return false;
  const started = await startLanding(deps, { ...input, intoHead });
  deps.log?.info(
    `epic #${input.epic}: ${input.defaultBranch} has ${missing} commit(s) ${epicBranch} lacks; ` +
      `${started ?? 'a landing'} first, then the pull request is marked ready`,
  );
  return true;
}

/** Decide on the log as read and write it (compare-and-swap), again while it changed. */
async function writeDecision(
  store: GitHubStateStore,
  decide: (log: LandLog) => Promise<LandingDecision>,
): Promise<LandingDecision> {
  for (let round = 1; round <= MAX_WRITES; round++) {
    const { log, sha } = await readLanding(store);
    const decision = await decide(log);
    if (decision.kind === 'none') return decision;
    const written = await store.writeJson(LAND_DOC, decision.log, sha);
    if (written.ok) return decision;
  }
  throw new EpicflowError(
    'state',
    `GitHub state: ${store.docPath(LAND_DOC)} kept changing while epicflow decided a landing`,
  );
}

/** Dispatches the story workflow as `land-<n>`; refused, the record says why and nothing waits. */
async function dispatchLanding(
  deps: SettledDeps,
  store: GitHubStateStore,
  input: { epic: number; defaultBranch: string },
  job: string,
): Promise<void> {
  try {
    await deps.repo.dispatchWorkflow({
      workflow: deps.storyWorkflow,
      ref: input.defaultBranch,
      inputs: jobInputs({ kind: 'land', epic: input.epic, job, attempt: 1 }),
    });
    deps.log?.info(`epic #${input.epic}: dispatched ${job}`);
  } catch (e) {
    const reason = `the land job was not started: ${e instanceof Error ? e.message : String(e)}`;
    await store.updateJson<unknown>(LAND_DOC, (current) => {
      const log = readLandLog(current, store.docPath(LAND_DOC));
      const ended = landRunEnded(log, job, 'not started', deps.now().toISOString());
      if (ended.log === undefined || ended.died === undefined) return log;
      return {
        ...ended.log,
        lands: ended.log.lands.map((l) => (l.job === job ? { ...l, reason } : l)),
      };
    });
    throw e;
  }
}

/**
 * A `land-<n>` run completed. A record still running means its job died before it
 * recorded anything: marked not landed, and the epic held with it. Then the landing
 * queued meanwhile starts. Returns the landing started, if any.
 */
export async function landRunCompleted(
  deps: SettledDeps,
  input: { epic: number; job: string; conclusion: string; defaultBranch: string },
): Promise<string | null> {
  const { repo } = deps;
  const store = new GitHubStateStore({
    repo,
    epic: String(input.epic),
    defaultBranch: input.defaultBranch,
  });
  const now = deps.now().toISOString();
  const pending = await withEpicLock(`${repo.fullName}#${input.epic}`, async () => {
    for (let round = 1; round <= MAX_WRITES; round++) {
      const { log, sha } = await readLanding(store);
      const ended = landRunEnded(log, input.job, input.conclusion, now);
      if (ended.log === undefined || ended.died === undefined) return log.pending;
      const written = await store.writeJson(LAND_DOC, ended.log, sha);
      if (!written.ok) continue;
      const doc = await store.readJson<EpicDoc>(EPIC_DOC);
      await updateEpicDoc(
        store,
        { value: doc?.value ?? {}, sha: doc?.sha ?? null },
        { halt: landHalt(ended.died) },
      );
      return ended.log.pending;
    }
    return undefined;
  });
  if (pending === undefined) return null;
  // The default branch may have moved on since it was queued: land its head now.
  const intoHead = (await repo.getBranchSha(pending.into)) ?? pending.intoHead;
  return ensureLanding(deps, { epic: input.epic, defaultBranch: input.defaultBranch, intoHead });
}
