/**
 * The publish side of a landing: the job that holds the write credential and runs nothing of
 * the repository's or the land coder's. It reads the work job's hand-over (handover.ts) and
 * the landed merge from its bundle into a bare repository of its own, and re-derives from
 * the objects what it must trust before it pushes: the merge's parents are the epic head and
 * the branch head the hand-over names, both on their branches on GitHub; what the merge holds
 * that neither parent does (the coder's resolution) is only in paths either branch changed
 * since they parted, passes the perimeter's rules (no gitlink, no link out of the
 * repository, no protected path without the config's leave) and holds no credential. Then
 * it pushes with a lease on the epic head — merging again without a work tree when a story
 * moved it meanwhile — and writes the landing's record; a landing that did not land holds
 * the epic.
 */
import { join } from 'node:path';
import type { PublishGit } from '../../adapters/git/publish-git.js';
import type { RemoteGit } from '../../adapters/git/remote-git.js';
import { buildLandMessage } from '../../core/merge-message.js';
import { epicBranchName } from '../../core/model.js';
import { publishRefusal } from '../../core/publish/checks.js';
import type { LandHandover } from '../../core/publish/handover.js';
import {
  DEFAULT_MAX_BUNDLE_BYTES,
  RESULT_FILES,
  ResultRefusal,
} from '../../core/publish/result.js';
import type { LandRecord } from '../../core/land/index.js';
import { LAND_DOC } from '../../core/epic/landing.js';
import { commitLinks } from '../../engine/story/checks.js';
import { docFile, saving, type Saving } from './job-record.js';
import { pushing, type Pushing, type PushRound } from './job-push.js';
import {
  hold,
  landedRecord,
  notLanded,
  withLanding,
  type LandJobInput,
  type PreparedLanding,
} from './land-job.js';
import { mergeOnto } from './publish-result.js';
import { bareRepository } from './story-publish.js';

/** Landings merged again after the epic branch moved on GitHub, before the epic is held. */
const MAX_LAND_PUSHES = 3;

export interface LandJobResult {
  /** The record as written on GitHub. */
  readonly record: LandRecord;
}

export interface LandPublishInput extends LandJobInput {
  /** The downloaded artifact: the hand-over and, for a merge, its bundle. */
  readonly resultDir: string;
  /** Values of the secrets the publish job holds. */
  readonly secrets: readonly string[];
}

/**
 * A landing's hand-over written to GitHub: it ends with the merge for the shell to push when
 * it passes, and the landing log holding the record for the shell to save, which holds the
 * epic after it when the landing did not land.
 */
export async function publishLandJob(
  input: LandPublishInput,
  prepared: PreparedLanding,
  handover: LandHandover,
): Promise<Saving<LandJobResult> | Pushing<LandJobResult>> {
  const { epic } = input;
  const { defaultBranch, started, config } = prepared;
  const epicBranch = epicBranchName(String(epic));
  if (handover.land !== input.job) {
    throw new ResultRefusal(
      'malformed',
      `the result record field land is ${JSON.stringify(handover.land)}, expected ${JSON.stringify(input.job)}`,
    );
  }
  const record: LandRecord = {
    ...started,
    epicHeadBefore: handover.epicHead,
    intoHeadBefore: handover.branchHead,
    conflicts: [...handover.conflicts],
    failingGates: [...handover.failingGates],
    rounds: handover.rounds,
    executors: [...handover.executors],
    usage: [...handover.usage],
    notes: [...handover.notes],
  };
  const { outcome } = handover;
  const save = (landed: LandRecord): Saving<LandJobResult> => savingLanding(prepared, landed);
  if (outcome.kind === 'failed') return save(notLanded(record, outcome.reason));
  const git = await bareRepository(join(input.tempDir, 'publish.git'), input.repo.botLogin);
  const remote = input.remote.at(git.gitDir);
  const heads = await remote.fetch([epicBranch, defaultBranch]);
  if (outcome.kind === 'unchanged') {
    // Nothing to land is a claim about GitHub's branches: the epic holds the branch head.
    const tip = heads.get(epicBranch);
    const known = (await git.commitOf(handover.branchHead)) === handover.branchHead;
    if (tip === undefined || !known || !(await git.isAncestor(handover.branchHead, tip))) {
      throw new ResultRefusal(
        'not-descended',
        `the landing says ${epicBranch} holds ${defaultBranch} at ${handover.branchHead} already, and it does not`,
      );
    }
    return save(landedRecord(record, undefined));
  }
  await checkLanding(git, handover, {
    epicHead: heads.get(epicBranch),
    intoHead: heads.get(defaultBranch),
    configPaths: [input.configPath],
    allowWorkflowChanges: config.allowWorkflowChanges,
    secrets: input.secrets,
    bundle: join(input.resultDir, RESULT_FILES.bundle),
  });
  const say = (message: string): void =>
    input.onEvent?.({ at: new Date().toISOString(), kind: 'story', story: input.job, message });
  return pushLanding(git, remote, record, handover, outcome.commit, say, async (landed) =>
    save(landed),
  );
}

/** The landing log with `landed` in it, for the shell to save; the epic held after a landing that did not land. */
function savingLanding(prepared: PreparedLanding, landed: LandRecord): Saving<LandJobResult> {
  const { store } = prepared;
  const change = withLanding(store, landed);
  return saving(
    {
      file: docFile<unknown>(store, LAND_DOC),
      sha: prepared.logSha,
      value: change(prepared.log),
      change,
    },
    async () => {
      if (landed.outcome === 'not-landed') await hold(store, landed);
      return { record: landed };
    },
    // Not reached: a landing's lost save is made again.
    { record: landed },
  );
}

/**
 * The landed merge on the epic head, made again on a moved head: the push the shell makes
 * (`Pushing`), and the record it ends with, handed to `then`.
 */
function pushLanding(
  git: PublishGit,
  remote: Pick<RemoteGit, 'push' | 'fetch'>,
  record: LandRecord,
  handover: LandHandover,
  landed: string,
  say: (message: string) => void,
  then: (record: LandRecord) => Promise<Saving<LandJobResult>>,
): Pushing<LandJobResult> {
  const epicBranch = record.epicBranch;
  // The head the last push was made on: the landing's epic head before, as GitHub had it.
  let onto = handover.epicHead;
  const round = async (n: number): Promise<PushRound<string>> => {
    const head = n === 1 ? handover.epicHead : (await remote.fetch([epicBranch])).get(epicBranch);
    if (head === undefined) return { stop: `${epicBranch} was deleted on GitHub while landing` };
    onto = head;
    if (head === handover.epicHead) return { push: landed, lease: head };
    say(`${epicBranch} moved on GitHub; merging the landing again on its new head`);
    // A story merged meanwhile: its commits join the landing without a work tree.
    const message = buildLandMessage({
      branch: record.into,
      epicBranch,
      chain: record.executors,
    });
    const merged = await mergeOnto(git, head, landed, message);
    if (!merged.ok) {
      return {
        stop: `${epicBranch} moved on GitHub after the landing was made, and it conflicts with the landing: ${merged.conflicts.join(', ')}`,
      };
    }
    return { push: merged.merge, lease: head };
  };
  return pushing(remote, epicBranch, MAX_LAND_PUSHES, round, async (out) => {
    if (out.kind === 'pushed') {
      const notes =
        out.sha === landed
          ? record.notes
          : [
              ...record.notes,
              `${epicBranch} moved after the work job's gates ran on the landing: merged again on its new head (${out.sha.slice(0, 12)})`,
            ];
      say(`${epicBranch} landed: ${out.sha.slice(0, 12)}`);
      return then(landedRecord({ ...record, epicHeadBefore: onto, notes }, out.sha));
    }
    if (out.kind === 'stopped') return then(notLanded(record, out.value));
    return then(
      notLanded(
        record,
        out.kind === 'refused'
          ? out.reason
          : `${epicBranch} kept moving on GitHub: ${MAX_LAND_PUSHES} pushes were refused`,
      ),
    );
  });
}

/**
 * The landed merge read from the bundle and checked from its objects; a merge that fails a
 * check is refused (`ResultRefusal`) and nothing is pushed.
 */
async function checkLanding(
  git: PublishGit,
  handover: LandHandover,
  on: {
    readonly epicHead: string | undefined;
    readonly intoHead: string | undefined;
    readonly configPaths: readonly string[];
    readonly allowWorkflowChanges: boolean;
    readonly secrets: readonly string[];
    readonly bundle: string;
  },
): Promise<void> {
  const { epicHead, branchHead, outcome } = handover;
  if (outcome.kind !== 'merged') return;
  const landed = outcome.commit;
  for (const [field, sha, tip] of [
    ['epicHead', epicHead, on.epicHead],
    ['branchHead', branchHead, on.intoHead],
  ] as const) {
    if (
      tip === undefined ||
      (await git.commitOf(sha)) !== sha ||
      !(await git.isAncestor(sha, tip))
    ) {
      throw new ResultRefusal(
        'not-descended',
        `the landing's ${field} ${sha} is not on its branch on GitHub`,
      );
    }
  }
  await git.dropQuarantine();
  try {
    const imported = await git.importBundle(on.bundle, {
      maxBytes: DEFAULT_MAX_BUNDLE_BYTES,
      withGated: false,
    });
    if (imported.story !== landed) {
      throw new ResultRefusal(
        'missing-objects',
        `the landing's commit ${landed} is not in the result bundle`,
        [`the bundle holds ${imported.story}`],
      );
    }
    const parents = await git.parentsOf(landed);
    if (parents.join(' ') !== `${epicHead} ${branchHead}`) {
      throw new ResultRefusal(
        'malformed',
        `the landing's commit ${landed} is not the merge of the branch head into the epic head`,
        [`its parents: ${parents.join(', ') || 'none'}`, `expected: ${epicHead}, ${branchHead}`],
      );
    }
    // What the merge holds that neither parent does: the coder's resolution.
    const fromBranch = new Set((await git.changedPaths(branchHead, landed)).map((c) => c.path));
    const resolved = (await git.changedPaths(epicHead, landed)).filter((c) =>
      fromBranch.has(c.path),
    );
    if (resolved.length === 0) return;
    const base = await git.mergeBase(epicHead, branchHead);
    const within = new Set(
      base === null
        ? []
        : [
            ...(await git.changedPaths(base, epicHead)),
            ...(await git.changedPaths(base, branchHead)),
          ].map((c) => c.path),
    );
    const outside = resolved.filter((c) => !within.has(c.path)).map((c) => c.path);
    if (outside.length > 0) {
      throw new ResultRefusal(
        'perimeter',
        `${handover.land} changes paths neither branch changed since they parted`,
        outside,
      );
    }
    const paths = resolved.map((c) => c.path);
    const diff = await git.diff(epicHead, landed, paths);
    const refusal = publishRefusal({
      story: { id: handover.land, owns: paths, reads: [], testsChange: true },
      subject: handover.land,
      configPaths: on.configPaths,
      allowWorkflowChanges: on.allowWorkflowChanges,
      changes: resolved,
      links: await commitLinks(git, landed, resolved),
      diff,
      // The resolution is scanned as one commit: what the merge adds that neither branch had.
      commits: [{ sha: landed, message: '', patch: diff }],
      secrets: on.secrets,
    });
    if (refusal !== null) throw refusal;
  } finally {
    await git.dropQuarantine();
  }
}
