/**
 * The local kinds that run an epic's engine (`epicflow run`, `epicflow land`): each kind
 * is one object, and one shell runs it. The kind's `prepare` makes every check that can
 * refuse, before anything is created; the shell then chooses who untrusted code runs as,
 * takes the epic's lock and opens its event log, and hands the kind's `run` an `open` that
 * wires the epic (`composeEpic`) and opens its context, aborted when the command is
 * interrupted. Everything is closed by the local job (`local-job.ts`).
 */
import type { Untrusted } from '../../adapters/process/untrusted.js';
import { answerKey } from '../../adapters/state/answer-key.js';
import type { FileStateStore } from '../../adapters/state/file-store.js';
import type { EpicflowConfig } from '../../core/config/types.js';
import type { Plan } from '../../core/model.js';
import type { EpicContext, EpicSettings } from '../../engine/context.js';
import type { EngineEvent } from '../../engine/ports.js';
import { openEpic } from '../../engine/run-epic.js';
import { composeEpic } from '../../composition/epic.js';
import { epicsRoot, type EpicFolders } from './local-epics.js';
import { runLocalKind, type LocalHooks, type LocalJob, type LocalJobOptions } from './local-job.js';

/** What the shell of an epic kind is given by its entry. */
export interface EpicKindHooks extends LocalHooks {
  /** Every engine event, in order (and appended to the epic's `events.jsonl`). */
  readonly onEvent: (event: EngineEvent) => void;
}

/** What a kind's `prepare` found: the epic's folders, and what the start warns about. */
interface PreparedEpic {
  readonly folders: EpicFolders;
  /** `warning: …` lines, said before anything is created. */
  readonly warnings?: readonly string[];
}

/** The epic as it is wired: its plan and config as checked by `prepare`. */
interface EpicToWire {
  readonly folders: EpicFolders;
  readonly plan: Plan;
  readonly config: EpicflowConfig;
  readonly configPaths: readonly string[];
  readonly executorEnv: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/** What a kind wires beyond what every local epic does (a run's test hooks, logs and trace). */
type ExtraWiring = Partial<
  Pick<Parameters<typeof composeEpic>[0], 'state' | 'onCheckpoint' | 'sleep' | 'logs' | 'trace'>
>;

/** What the shell hands a kind's `run`: the job, the lock held, the event log open. */
export interface EpicJob<Hooks extends EpicKindHooks = EpicKindHooks> {
  readonly job: LocalJob;
  readonly hooks: Hooks;
  /** The epic's state store, its lock held. */
  readonly store: FileStateStore;
  readonly untrusted: Untrusted;
  /** Each event to the command and to `events.jsonl`. */
  readonly onEvent: (event: EngineEvent) => void;
  /**
   * Wires the epic and opens its context (its branch created when missing), aborted when
   * the command is; `beforeOpen` runs between the two (the run records its epic there).
   */
  open(
    epic: EpicToWire,
    how?: {
      readonly wiring?: ExtraWiring;
      /** The epic branch to open, when a record says another than the epic's name. */
      readonly epicBranch?: string;
      readonly beforeOpen?: (settings: EpicSettings) => Promise<void>;
    },
  ): Promise<EpicContext>;
}

/** One local kind that runs an epic's engine. */
export interface LocalEpicKind<
  Options extends LocalJobOptions,
  Hooks extends EpicKindHooks,
  Prepared extends PreparedEpic,
  Result,
> {
  /** Every check that can refuse (`EpicflowError`), before anything is created. */
  prepare(job: LocalJob, options: Options): Promise<Prepared>;
  /** The kind's work, its epic locked. */
  run(epicJob: EpicJob<Hooks>, prepared: Prepared, options: Options): Promise<Result>;
}

/** Runs `kind` as a local kind: prepare, then the untrusted user, the lock and the events, then run. */
export function runEpicKind<
  Options extends LocalJobOptions,
  Hooks extends EpicKindHooks,
  Prepared extends PreparedEpic,
  Result,
>(
  kind: LocalEpicKind<Options, Hooks, Prepared, Result>,
  options: Options,
  hooks: Hooks,
): Promise<Result> {
  return runLocalKind(
    { prepare: (job) => kind.prepare(job, options), run: (job, prepared) => locked(job, prepared) },
    options,
    hooks,
  );
  /** The kind's run, after the agent user is chosen, the lock taken and the event log opened. */
  async function locked(job: LocalJob, prepared: Prepared): Promise<Result> {
    for (const line of prepared.warnings ?? []) hooks.onWarning?.(line);
    const untrusted = await job.untrusted(options, prepared.folders);
    const store = await job.lock(prepared.folders);
    // Events are appended in order, without holding up the work.
    const onEvent = job.eventLog(store, hooks.onEvent);
    const open: EpicJob<Hooks>['open'] = async (epic, how = {}) => {
      const { ports, settings } = await composeEpic({
        repo: job.repo,
        epic: epic.folders.epic,
        plan: epic.plan,
        config: epic.config,
        configPaths: epic.configPaths,
        executorEnv: epic.executorEnv,
        env: hooks.env,
        untrusted,
        state: store,
        answerKey: await answerKey(epicsRoot(job.repo)),
        folders: epic.folders,
        onEvent,
        ...how.wiring,
      });
      await how.beforeOpen?.(settings);
      const ctx = await openEpic(
        how.epicBranch === undefined ? settings : { ...settings, epicBranch: how.epicBranch },
        ports,
      );
      const release = ctx.stopOn(hooks.interrupt);
      job.onClose(() => {
        release();
        return Promise.resolve();
      });
      return ctx;
    };
    return kind.run({ job, hooks, store, untrusted, onEvent, open }, prepared, options);
  }
}
