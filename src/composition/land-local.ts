/**
 * `epicflow land` on one machine: bring a local branch (the one checked out,
 * by default) into a finished epic with `bringIntoEpic`, then merge the epic
 * branch into that branch with `--no-ff`. Every check that can refuse runs
 * before anything moves; when the landing fails, the epic branch and the
 * branch are exactly where they were.
 */
import { epicsRoot, pickEpic } from './local-epics.js';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createExecutor } from '../adapters/executors/index.js';
import { readMergedStories, type Git } from '../adapters/git/index.js';
import { gitPort, landGitPort } from '../adapters/git/port.js';
import { reclaimingLandTrees, reclaimingTrees } from './reclaiming-trees.js';
import { buildLandedMessage } from '../core/merge-message.js';
import { shellGates } from '../adapters/process/shell-gates.js';
import { localUntrusted } from './local-untrusted.js';
import type { AgentUserFlag } from '../core/agent-user.js';
import { FileStateStore } from '../adapters/state/file-store.js';
import { describeError, EpicflowError } from '../core/errors.js';
import {
  LAND_FILE,
  landNextStep,
  nextLandJob,
  readLandLog,
  unfinishedStories,
  withLand,
  type LandLog,
  type LandRecord,
} from '../core/land/index.js';
import { epicBranchName, type StoryRecord } from '../core/model.js';
import { buildReportJson, renderReport, type ReportInput } from '../core/report/index.js';
import type { EpicPorts, EpicSettings } from '../engine/context.js';
import { bringIntoEpic, noLandFacts, type LandFacts } from '../engine/land.js';
import { systemClock } from './epic.js';
import type { LocalRunHooks } from './local.js';
import { loadLocalConfig, openRepo } from './local-config.js';
import { buildReportInput, openEpic } from '../engine/run-epic.js';
import type { SavedEpic } from '../engine/status.js';

interface LocalLandOptions {
  readonly epic?: string | undefined;
  /** The branch to land in (default: the one checked out in the repository's main work tree). */
  readonly into?: string | undefined;
  readonly repo?: string | undefined;
  readonly config?: string | undefined;
  /** Who the coder, setup and gates run as (see core/agent-user.ts). */
  readonly agentUser?: AgentUserFlag;
}

/** As for a run; aborting `interrupt` (SIGINT/SIGTERM) stops the landing, and nothing moves. */
interface LocalLandHooks extends Pick<
  LocalRunHooks,
  'cwd' | 'env' | 'onEvent' | 'interrupt' | 'onWarning'
> {
  /** Test hook: after the epic branch moved, before the branch landed in moves. */
  readonly beforeInto?: (() => void | Promise<void>) | undefined;
}

interface LocalLandResult {
  /** 0 landed, 1 not landed (nothing moved). */
  readonly exitCode: 0 | 1;
  readonly epic: string;
  readonly epicBranch: string;
  readonly into: string;
  readonly record: LandRecord;
  /** The work tree whose checkout followed the branch landed in, if it was checked out. */
  readonly checkout: string | null;
  /** `land.json`. */
  readonly file: string;
}

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

interface Prepared {
  readonly repo: Git;
  readonly epic: string;
  readonly saved: SavedEpic;
  readonly epicBranch: string;
  readonly epicHead: string;
  readonly into: string;
  readonly intoHead: string;
  readonly checkout: string | null;
  readonly stateDir: string;
  readonly local: Awaited<ReturnType<typeof loadLocalConfig>>;
  /** The story records, every story the epic branch merged shown done. */
  readonly records: ReadonlyMap<string, StoryRecord>;
}

/** Every refusal (exit 2) before anything is created or moved. */
async function prepare(options: LocalLandOptions, hooks: LocalLandHooks): Promise<Prepared> {
  const repo = await openRepo(resolve(hooks.cwd, options.repo ?? '.'));
  const epic = await pickEpic(repo, options.epic);
  const stateDir = join(epicsRoot(repo), epic);
  const store = new FileStateStore(stateDir);
  const saved = await store.readJson<SavedEpic>('epic.json');
  if (saved === null || !Array.isArray(saved.plan?.stories)) {
    throw new EpicflowError('state', `unreadable epic record: ${join(stateDir, 'epic.json')}`, {
      details: ['rerun `epicflow run` with the epic’s plan to write it again'],
    });
  }
  const epicBranch = saved.epicBranch || epicBranchName(epic);
  const epicHead = await repo.revParse(`refs/heads/${epicBranch}`);
  if (epicHead === null) {
    throw new EpicflowError('usage', `the epic branch ${epicBranch} does not exist`, {
      details: ['rerun `epicflow run` with the epic’s plan to create it'],
    });
  }
  const local = await loadLocalConfig({
    root: repo.root,
    config: options.config,
    cwd: hooks.cwd,
    env: hooks.env,
  });
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
    saved,
    epicBranch,
    epicHead,
    into,
    intoHead,
    checkout,
    stateDir,
    local,
    records,
  };
}

/** Lands the epic locally; refusals throw `EpicflowError` (exit 2) before anything moves. */
export async function landLocalEpic(
  options: LocalLandOptions,
  hooks: LocalLandHooks,
): Promise<LocalLandResult> {
  const p = await prepare(options, hooks);
  const { repo, epicBranch, into } = p;
  const untrusted = await localUntrusted(
    options.agentUser,
    { roots: [join(repo.gitDir, 'epicflow')], home: join(p.stateDir, 'agent-home') },
    hooks,
  );
  const store = new FileStateStore(p.stateDir);
  const unlock = await store.lock();
  let appending: Promise<void> = Promise.resolve();
  const ports: EpicPorts = {
    git: reclaimingTrees(gitPort(repo), untrusted),
    state: store,
    gates: shellGates(hooks.env, untrusted),
    executors: (e) =>
      createExecutor(e, { sourceEnv: hooks.env, prices: p.local.config.prices, untrusted }),
    clock: systemClock,
    events: {
      emit: (event) => {
        hooks.onEvent(event);
        appending = appending.then(() => store.appendEvent(event)).catch(() => undefined);
      },
    },
  };
  let houseRules: string | undefined;
  try {
    houseRules = await readFile(join(repo.root, 'CONTRIBUTING.md'), 'utf8');
  } catch {
    houseRules = undefined; // no house rules: fine
  }
  const worktreesDir = join(epicsRoot(repo), 'worktrees', p.epic);
  const settings: EpicSettings = {
    epic: p.epic,
    epicBranch,
    plan: p.saved.plan,
    config: p.local.config,
    configPaths: p.local.configPaths,
    worktreesDir,
    homesDir: join(p.stateDir, 'homes'),
    executorEnv: p.local.executorEnv,
    houseRules,
  };
  const now = (): string => new Date().toISOString();
  let log: LandLog = readLandLog(
    await store.readJson<unknown>(LAND_FILE),
    join(p.stateDir, LAND_FILE),
  );
  const job = nextLandJob(log);
  let record: LandRecord = {
    job,
    into,
    epicBranch,
    startedAt: now(),
    outcome: 'running',
    epicHeadBefore: p.epicHead,
    intoHeadBefore: p.intoHead,
    ...noLandFacts(),
  };
  const save = async (next: LandRecord): Promise<void> => {
    record = next;
    log = withLand(log, record);
    await store.writeJson(LAND_FILE, log);
  };
  const finish = async (
    facts: LandFacts,
    outcome:
      | { ok: true; epicHead: string; intoHead: string }
      | { ok: false; reason: string; nextStep?: string },
  ): Promise<LocalLandResult> => {
    const base = { ...record, ...facts, finishedAt: now() };
    if (outcome.ok) {
      await save({
        ...base,
        outcome: 'landed',
        ...(outcome.epicHead === p.epicHead ? {} : { epicHeadAfter: outcome.epicHead }),
        intoHeadAfter: outcome.intoHead,
      });
    } else {
      await save({
        ...base,
        outcome: 'not-landed',
        reason: outcome.reason,
        nextStep:
          outcome.nextStep ??
          landNextStep({
            epicBranch,
            into,
            conflicts: facts.conflicts,
            failingGates: facts.failingGates,
          }),
      });
    }
    await writeReport(store, p, log, record.nextStep);
    return {
      exitCode: outcome.ok ? 0 : 1,
      epic: p.epic,
      epicBranch,
      into,
      record,
      checkout: p.checkout,
      file: join(p.stateDir, LAND_FILE),
    };
  };
  try {
    await save(record);
    const ctx = await openEpic(settings, ports);
    const onAbort = (): void => ctx.interrupt.abort();
    if (hooks.interrupt?.aborted === true) onAbort();
    hooks.interrupt?.addEventListener('abort', onAbort, { once: true });
    try {
      ctx.emit('epic', `${job}: landing ${epicBranch} in ${into}`);
      if (ctx.epicHead !== p.epicHead) {
        return await finish(noLandFacts(), {
          ok: false,
          reason: `${epicBranch} moved meanwhile (it was at ${p.epicHead.slice(0, 12)})`,
          nextStep: 'rerun `epicflow land`',
        });
      }
      if (await repo.isAncestor(p.epicHead, p.intoHead)) {
        ctx.emit('epic', `${into} already contains ${epicBranch}: nothing to land`);
        const facts: LandFacts = { ...noLandFacts(), notes: ['already landed'] };
        return await finish(facts, { ok: true, epicHead: p.epicHead, intoHead: p.intoHead });
      }
      const brought = await bringIntoEpic(ctx, reclaimingLandTrees(landGitPort(repo), untrusted), {
        job,
        branch: into,
        branchHead: p.intoHead,
        treePath: join(worktreesDir, '_land'),
      });
      const { ok: _ok, ...facts } = brought;
      if (!brought.ok) return await finish(facts, { ok: false, reason: brought.reason });
      let landed: string | { reason: string };
      try {
        await hooks.beforeInto?.();
        landed = await landInto(p, brought.epicHead);
      } catch (e) {
        landed = { reason: describeError(e).split('\n').join(' | ') };
      }
      if (typeof landed !== 'string') {
        // The branch moved, or its checkout changed, meanwhile: the epic goes back by CAS.
        const back =
          !brought.merged ||
          (await repo.updateRef(`refs/heads/${epicBranch}`, p.epicHead, brought.epicHead));
        const reason = back
          ? landed.reason
          : `${landed.reason}; ${epicBranch} was moved meanwhile too, so it stays where it is`;
        ctx.emit('epic', `not landed: ${reason}`);
        return await finish(
          brought.merged && back
            ? {
                ...facts,
                notes: [...facts.notes, `${epicBranch} put back at ${p.epicHead.slice(0, 12)}`],
              }
            : facts,
          { ok: false, reason, nextStep: 'rerun `epicflow land`' },
        );
      }
      ctx.emit('epic', `${into} merged ${epicBranch}: ${landed.slice(0, 12)}`);
      return await finish(facts, { ok: true, epicHead: brought.epicHead, intoHead: landed });
    } finally {
      hooks.interrupt?.removeEventListener('abort', onAbort);
    }
  } catch (e) {
    if (record.outcome === 'running') {
      const reason = describeError(e).split('\n').join(' | ');
      await save({ ...record, outcome: 'not-landed', finishedAt: now(), reason }).catch(
        () => undefined,
      );
    }
    throw e;
  } finally {
    await appending;
    await unlock();
  }
}

/**
 * `report.md` and `report.json` again, with the landings: the stories as the
 * records and the epic branch say, the elapsed time from the run's report.
 */
async function writeReport(
  store: FileStateStore,
  p: Prepared,
  log: LandLog,
  nextStep: string | undefined,
): Promise<void> {
  const before = await store.readJson<{ startedAt?: unknown }>('report.json').catch(() => null);
  const input: ReportInput = {
    ...buildReportInput({
      epic: p.epic,
      epicBranch: p.epicBranch,
      plan: p.saved.plan,
      stories: p.saved.plan.stories,
      records: p.records,
      startedAt: typeof before?.startedAt === 'string' ? before.startedAt : undefined,
      now: new Date().toISOString(),
      title: p.saved.title ?? undefined,
      halts: [],
      nextStep,
    }),
    landings: log.lands,
  };
  await store.writeText('report.md', renderReport(input));
  await store.writeText('report.json', `${JSON.stringify(buildReportJson(input), null, 2)}\n`);
}

/**
 * The epic merged into the branch with `--no-ff` (two parents: the branch head
 * and the epic head, the epic's tree): in its checkout when it has one, so the
 * files follow, else by compare-and-swap of the ref. The merge commit, or why not.
 */
async function landInto(p: Prepared, epicHead: string): Promise<string | { reason: string }> {
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
