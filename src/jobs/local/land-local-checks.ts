/**
 * What a local landing checks (`epicflow land`): every refusal before anything is created
 * or moved (`prepareLanding`, exit 2), and the last step, the epic merged into the branch
 * (`landInto`), which looks again at what may have changed meanwhile.
 */
import { readMergedStories, type Git } from '../../adapters/git/index.js';
import { FileStateStore } from '../../adapters/state/file-store.js';
import { EpicflowError } from '../../core/errors.js';
import { unfinishedStories } from '../../core/land/index.js';
import { buildLandedMessage } from '../../core/merge-message.js';
import type { StoryRecord } from '../../core/model.js';
import { requireSavedEpic, type SavedEpic } from '../../engine/status.js';
import type { LocalConfig } from './local-config.js';
import type { EpicFolders } from './local-epics.js';
import type { LocalJob } from './local-job.js';

/**
 * What keeps the checkout of the branch landed in from following the merge:
 * changes to tracked files, and untracked files the epic would overwrite.
 */
async function checkoutBlockers(repo: Git, dir: string, epicHead: string): Promise<string[]> {
  const tracked = await repo.dirtyPaths(dir, { untracked: false });
  const all = await repo.dirtyPaths(dir);
  const inEpic = new Set(await repo.listFiles(epicHead));
  const known = new Set(tracked);
  return [...tracked, ...all.filter((p) => !known.has(p) && inEpic.has(p))];
}

function dirtyCheckout(into: string, dir: string, paths: readonly string[]): EpicflowError {
  return new EpicflowError('usage', `the checkout of ${into} in ${dir} has uncommitted changes`, {
    details: [
      `${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''}`,
      `landing merges the epic into ${into} there: commit or stash them first`,
    ],
  });
}

export interface Prepared {
  readonly repo: Git;
  readonly epic: string;
  readonly folders: EpicFolders;
  readonly saved: SavedEpic;
  readonly epicBranch: string;
  readonly epicHead: string;
  readonly into: string;
  readonly intoHead: string;
  readonly checkout: string | null;
  readonly local: LocalConfig;
  /** The story records, every story the epic branch merged shown done. */
  readonly records: ReadonlyMap<string, StoryRecord>;
}

/** Every refusal (exit 2) before anything is created or moved. */
export async function prepareLanding(
  job: LocalJob,
  options: {
    readonly epic?: string | undefined;
    readonly config?: string | undefined;
    readonly into?: string | undefined;
  },
): Promise<Prepared> {
  const { repo } = job;
  const folders = await job.chosenEpic(options.epic);
  const { epic, state: stateDir } = folders;
  // Read before the lock is taken: a refusal leaves no trace.
  const store = new FileStateStore(stateDir);
  const saved = await requireSavedEpic(store);
  const { epicBranch } = saved;
  const epicHead = await repo.revParse(`refs/heads/${epicBranch}`);
  if (epicHead === null) {
    throw new EpicflowError('usage', `the epic branch ${epicBranch} does not exist`, {
      details: ['rerun `epicflow run` with the epic’s plan to create it'],
    });
  }
  const local = await job.config(options.config);
  let into = options.into;
  if (into === undefined) {
    const current = await repo.currentBranch();
    if (current === null) {
      throw new EpicflowError('usage', `HEAD of ${repo.root} is detached`, {
        details: ['name the branch to land in: --into BRANCH'],
      });
    }
    into = current;
  }
  if (into === epicBranch || into === `refs/heads/${epicBranch}`) {
    throw new EpicflowError('usage', `--into ${into} is the epic branch itself`);
  }
  into = into.replace(/^refs\/heads\//, '');
  const intoHead = /^-|[\0\n]/.test(into) ? null : await repo.revParse(`refs/heads/${into}`);
  if (intoHead === null) {
    throw new EpicflowError('usage', `no branch ${JSON.stringify(into)} in ${repo.root}`, {
      details: ['--into names a local branch'],
    });
  }
  // The same rule `epicflow run` and `status` use: merged on the epic branch, or recorded done.
  const records = new Map<string, StoryRecord>();
  for (const r of await store.listStories()) records.set(r.story, r);
  const merged = await readMergedStories(repo, epicBranch);
  const open = unfinishedStories(saved.plan, records, merged);
  if (open.length > 0) {
    throw new EpicflowError(
      'usage',
      `epic ${epic} is not finished: ${open.length} ${open.length === 1 ? 'story is' : 'stories are'} not merged`,
      {
        details: [
          ...open.map((s) => `${s.id}: ${s.status}`),
          'finish them first (rerun `epicflow run` with the epic’s plan), then land',
        ],
      },
    );
  }
  const checkout = await repo.checkoutOf(into);
  if (checkout !== null) {
    const blockers = await checkoutBlockers(repo, checkout, epicHead);
    if (blockers.length > 0) throw dirtyCheckout(into, checkout, blockers);
  }
  // For the report: the epic branch is the truth about merges, even when a record lags.
  for (const [id, mergeCommit] of merged) {
    const r = records.get(id);
    if (r === undefined || r.status === 'done') continue;
    const { reason: _reason, ...rest } = r;
    records.set(id, { ...rest, status: 'done', mergeCommit });
  }
  return {
    repo,
    epic,
    folders,
    saved,
    epicBranch,
    epicHead,
    into,
    intoHead,
    checkout,
    local,
    records,
  };
}

/**
 * The epic merged into the branch with `--no-ff` (two parents: the branch head
 * and the epic head, the epic's tree): in its checkout when it has one, so the
 * files follow, else by compare-and-swap of the ref. The merge commit, or why not.
 */
export async function landInto(
  p: Prepared,
  epicHead: string,
): Promise<string | { reason: string }> {
  const { repo, into } = p;
  const message = buildLandedMessage({
    epic: p.epic,
    epicBranch: p.epicBranch,
    into,
    title: p.saved.title,
  });
  const commit = await repo.commitTree(epicHead, [p.intoHead, epicHead], message);
  const checkout = await repo.checkoutOf(into);
  if (checkout !== p.checkout) {
    return { reason: `${into} was checked out elsewhere meanwhile (${checkout ?? 'nowhere'})` };
  }
  if (checkout === null) {
    return (await repo.updateRef(`refs/heads/${into}`, commit, p.intoHead))
      ? commit
      : { reason: `${into} moved meanwhile (it was at ${p.intoHead.slice(0, 12)})` };
  }
  if ((await repo.revParse(`refs/heads/${into}`)) !== p.intoHead) {
    return { reason: `${into} moved meanwhile (it was at ${p.intoHead.slice(0, 12)})` };
  }
  const blockers = await checkoutBlockers(repo, checkout, epicHead);
  if (blockers.length > 0) {
    return {
      reason: `the checkout of ${into} in ${checkout} changed meanwhile: ${blockers.slice(0, 5).join(', ')}`,
    };
  }
  if (!(await repo.worktree(checkout).fastForward(commit))) {
    return { reason: `the checkout of ${into} in ${checkout} could not follow the merge` };
  }
  return commit;
}
