/**
 * `epicflow land` on one machine: bring a local branch (the one checked out,
 * by default) into a finished epic with `bringIntoEpic`, then merge the epic
 * branch into that branch with `--no-ff`. Every check that can refuse runs
 * before anything moves; when the landing fails, the epic branch and the
 * branch are exactly where they were.
 */
import { join } from 'node:path';
import type { FileStateStore } from '../../adapters/state/file-store.js';
import { describeErrorLine } from '../../core/errors.js';
import {
  LAND_FILE,
  landNextStep,
  nextLandJob,
  readLandLog,
  withLand,
  type LandLog,
  type LandRecord,
} from '../../core/land/index.js';
import { buildReportJson, renderReport, type ReportInput } from '../../core/report/index.js';
import { bringIntoEpic, noLandFacts, type LandFacts } from '../../engine/land.js';
import { buildReportInput } from '../../engine/run-epic.js';
import { runEpicKind, type EpicJob, type LocalEpicKind } from './epic-kind.js';
import { landInto, prepareLanding, type Prepared } from './land-local-checks.js';
import type { LocalRunHooks } from './local.js';
import type { LocalJobOptions } from './local-job.js';

interface LocalLandOptions extends LocalJobOptions {
  /** The branch to land in (default: the one checked out in the repository's main work tree). */
  readonly into?: string | undefined;
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

/** `epicflow land`: its checks refuse before anything moves; its run lands or puts back. */
const landKind: LocalEpicKind<LocalLandOptions, LocalLandHooks, Prepared, LocalLandResult> = {
  prepare: prepareLanding,
  run: land,
};

/** Lands the epic locally; refusals throw `EpicflowError` (exit 2) before anything moves. */
export function landLocalEpic(
  options: LocalLandOptions,
  hooks: LocalLandHooks,
): Promise<LocalLandResult> {
  return runEpicKind(landKind, options, hooks);
}

/** How a landing ended: landed (the heads after), or not and why. */
type LandEnd =
  | { ok: true; epicHead: string; intoHead: string }
  | { ok: false; reason: string; nextStep?: string };

/**
 * This landing's record in `land.json`, saved as it starts: `save` keeps a change of it,
 * `finish` ends it, writes the report again and says what the command returns.
 */
async function startLanding(store: FileStateStore, p: Prepared) {
  const { epicBranch, into, folders } = p;
  const now = (): string => new Date().toISOString();
  const file = join(folders.state, LAND_FILE);
  let log: LandLog = readLandLog(await store.readJson<unknown>(LAND_FILE), file);
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
  const finish = async (facts: LandFacts, end: LandEnd): Promise<LocalLandResult> => {
    const base = { ...record, ...facts, finishedAt: now() };
    await save(
      end.ok
        ? {
            ...base,
            outcome: 'landed',
            ...(end.epicHead === p.epicHead ? {} : { epicHeadAfter: end.epicHead }),
            intoHeadAfter: end.intoHead,
          }
        : {
            ...base,
            outcome: 'not-landed',
            reason: end.reason,
            nextStep:
              end.nextStep ??
              landNextStep({
                epicBranch,
                into,
                conflicts: facts.conflicts,
                failingGates: facts.failingGates,
              }),
          },
    );
    await writeReport(store, p, log, record.nextStep);
    const result = { epic: p.epic, epicBranch, into, record, checkout: p.checkout, file };
    return { exitCode: end.ok ? 0 : 1, ...result };
  };
  /** A landing stopped by an error is saved as not landed, with the error as its reason. */
  const failed = async (e: unknown): Promise<void> => {
    if (record.outcome !== 'running') return;
    const reason = describeErrorLine(e);
    await save({ ...record, outcome: 'not-landed', finishedAt: now(), reason }).catch(
      () => undefined,
    );
  };
  await save(record);
  return { job, finish, failed };
}

async function land(
  { job: shell, hooks, store, open }: EpicJob<LocalLandHooks>,
  p: Prepared,
): Promise<LocalLandResult> {
  const { repo, epicBranch, into, folders } = p;
  const { job, finish, failed } = await startLanding(store, p);
  try {
    // The epic branch its run recorded.
    const ctx = await open(
      {
        folders,
        plan: p.saved.plan,
        config: p.local.config,
        configPaths: p.local.configPaths,
        executorEnv: p.local.executorEnv,
      },
      { epicBranch },
    );
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
    const brought = await bringIntoEpic(ctx, shell.landGitPort(), {
      job,
      branch: into,
      branchHead: p.intoHead,
      treePath: join(folders.worktrees, '_land'),
    });
    const { ok: _ok, ...facts } = brought;
    if (!brought.ok) return await finish(facts, { ok: false, reason: brought.reason });
    let landed: string | { reason: string };
    try {
      await hooks.beforeInto?.();
      landed = await landInto(p, brought.epicHead);
    } catch (e) {
      landed = { reason: describeErrorLine(e) };
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
  } catch (e) {
    await failed(e);
    throw e;
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
