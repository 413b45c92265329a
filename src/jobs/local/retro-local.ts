/**
 * The `epicflow retro` kind: the evidence of the epic's
 * failed and held stories (their records, their plan entries) goes to one executor with
 * the judge role on a read-only checkout of the epic head, and its proposal is written
 * to `retro.md` in the epic's state folder (kept as `retro.json`), one checkbox per fix.
 * The next `epicflow run` of the epic applies the ticked fixes first
 * (`applyApprovedRetro`), marks them in `retro.md`, and runs with them.
 */
import { planningGit } from '../../composition/planning-tree.js';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { ExecutorDeps } from '../../adapters/executors/index.js';
import type { FileStateStore } from '../../adapters/state/file-store.js';
import { EpicflowError } from '../../core/errors.js';
import type { Plan, StoryRecord, UsageEntry } from '../../core/model.js';
import type { PlanOptions } from '../../core/plan/types.js';
import {
  applyPlanFixes,
  newRetroProposal,
  pendingFixes,
  renderRetro,
  retriedRecord,
  retroProposalSchema,
  retroSubjects,
  tickedFixes,
  type FixOutcome,
  type RetroProposal,
  type RetroSubject,
} from '../../core/retro/index.js';
import { loadRosterState, pickHelper } from '../../core/roster/index.js';
import { proposeRetro } from '../../engine/retro.js';
import { requireSavedEpic } from '../../engine/status.js';
import { executorLookup, resolveExecutorEnvs } from '../../composition/epic.js';
import type { EpicflowConfig, ExecutorConfig } from '../../core/config/types.js';
import type { EpicFolders } from './local-epics.js';
import {
  runLocalKind,
  writeWhole,
  type LocalHooks,
  type LocalJobOptions,
  type LocalKind,
} from './local-job.js';

/** The proposal people tick, and the one epicflow keeps, in the epic's state folder. */
const RETRO_FILE = 'retro.md';
const RETRO_JSON = 'retro.json';

/** How the local retro file says its fixes get applied. */
const APPLY_WITH = 'the next `epicflow run` of this epic';

/** `--repo`, `--epic`, `--config`, and who the executor runs as, as for `epicflow run`. */
export type LocalRetroOptions = LocalJobOptions;

interface LocalRetroHooks extends LocalHooks {
  /** One line per step. */
  readonly onEvent: (message: string) => void;
  readonly executorDeps?: Omit<ExecutorDeps, 'sourceEnv' | 'prices'> | undefined;
}

type LocalRetroResult =
  | {
      readonly kind: 'proposed';
      readonly file: string;
      readonly proposal: RetroProposal;
      /** Rounds of the call (2 after a repair re-ask) and what they cost. */
      readonly rounds: number;
      readonly usage: readonly UsageEntry[];
    }
  | { readonly kind: 'nothing'; readonly epic: string };

/** Reads the kept proposal; absent is null, anything else epicflow did not write is an error. */
async function readProposal(store: FileStateStore): Promise<RetroProposal | null> {
  const raw = await store.readJson<unknown>(RETRO_JSON);
  if (raw === null) return null;
  const parsed = retroProposalSchema.safeParse(raw);
  if (!parsed.success) {
    throw new EpicflowError(
      'state',
      `${join(store.dir, RETRO_JSON)} is not a retro epicflow wrote`,
      {
        details: ['delete it (and retro.md), then run `epicflow retro` again'],
      },
    );
  }
  return parsed.data;
}

async function readText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

/** What `epicflow retro` checked before its call: the epic, its subjects, the executor. */
type PreparedRetro =
  | { readonly nothing: true; readonly epic: string }
  | {
      readonly nothing: false;
      readonly folders: EpicFolders;
      /** The epic's state store, its lock held. */
      readonly store: FileStateStore;
      readonly plan: Plan;
      readonly subjects: readonly RetroSubject[];
      readonly config: EpicflowConfig;
      readonly executor: ExecutorConfig;
      readonly env: Readonly<Record<string, string>>;
      /** The epic head the executor reads. */
      readonly head: string;
      readonly now: Date;
    };

/** `epicflow retro`: proposes one fix per failed or held story and writes `retro.md`. */
const retroKind: LocalKind<LocalRetroOptions, LocalRetroHooks, PreparedRetro, LocalRetroResult> = {
  async prepare(job, options, hooks) {
    const { repo } = job;
    const folders = await job.chosenEpic(options.epic);
    const { epic, state: stateDir } = folders;
    const store = await job.lock(folders);
    const kept = await readProposal(store);
    if (kept !== null) {
      const md = (await readText(join(stateDir, RETRO_FILE))) ?? '';
      const waiting = pendingFixes(kept, tickedFixes(md, kept));
      if (waiting.length > 0) {
        throw new EpicflowError(
          'usage',
          `${join(stateDir, RETRO_FILE)} has approved fixes not applied yet: ${waiting.map((f) => f.story).join(', ')}`,
          { details: ['apply them with `epicflow run`, or untick them, before a new retro'] },
        );
      }
    }
    const doc = await requireSavedEpic(store);
    const { plan } = doc;
    const records = new Map<string, StoryRecord>(
      (await store.listStories()).map((r) => [r.story, r]),
    );
    const subjects = retroSubjects(plan, records);
    if (subjects.length === 0) return { nothing: true, epic };

    const { config } = await job.config(options.config, { deferEnv: true });
    const now = new Date();
    const roster = loadRosterState(
      await store.readJson<unknown>('roster.json'),
      join(stateDir, 'roster.json'),
    );
    const picked = pickHelper(config.executors, roster, {
      role: 'judge',
      preferred: config.judge?.executor,
      avoid: [],
      now,
    });
    if (picked === null) {
      throw new EpicflowError('config', 'no executor can run the retro', {
        details: [
          'give an executor the judge role (roles: [coder, judge]): the retro runs it read-only',
        ],
      });
    }
    const executor = picked.executor;
    const env = resolveExecutorEnvs([executor], hooks.env)[executor.id] ?? {};
    const head = await repo.revParse(`refs/heads/${doc.epicBranch}`);
    if (head === null) {
      throw new EpicflowError('state', `the epic branch ${doc.epicBranch} does not exist`);
    }
    return { nothing: false, folders, store, plan, subjects, config, executor, env, head, now };
  },

  async run(job, prepared, options, hooks) {
    if (prepared.nothing) return { kind: 'nothing', epic: prepared.epic };
    const { folders, store, plan, subjects, config, executor, env, head, now } = prepared;
    const { epic, state: stateDir } = folders;
    // The executor runs as the judge of a run does: as the agent user when there is one.
    const untrusted = await job.untrusted(options, folders);
    const work = job.scratch(join(stateDir, 'retro'));
    const outcome = await proposeRetro(
      {
        epic,
        plan,
        subjects,
        base: head,
        executor,
        config,
        env,
        home: join(work, 'home'),
      },
      {
        git: planningGit(job.repo, join(work, 'tree')),
        executors: executorLookup({ config, env: hooks.env, untrusted, deps: hooks.executorDeps }),
        emit: hooks.onEvent,
        signal: hooks.interrupt,
      },
    );
    if (outcome.kind === 'failed') {
      throw new EpicflowError('executor', `the retro found no proposal: ${outcome.reason}`);
    }
    const proposal = newRetroProposal({
      epic,
      at: now.toISOString(),
      executor: executor.id,
      plan,
      subjects,
      answer: outcome,
    });
    await store.writeJson(RETRO_JSON, proposal);
    const file = await store.writeText(
      RETRO_FILE,
      renderRetro(proposal, { ticked: new Set(), applyWith: APPLY_WITH }),
    );
    return { kind: 'proposed', file, proposal, rounds: outcome.rounds, usage: outcome.usage };
  },
};

/** `epicflow retro`: proposes one fix per failed or held story and writes `retro.md`. */
export function retroLocally(
  options: LocalRetroOptions,
  hooks: LocalRetroHooks,
): Promise<LocalRetroResult> {
  return runLocalKind(retroKind, options, hooks);
}

interface AppliedRetro {
  /** Set when an approved fix edited the plan file: the run reads it again. */
  readonly planChanged: boolean;
}

/**
 * At the start of `epicflow run` (the epic's lock held): applies the fixes ticked in
 * `retro.md` that were not applied yet — plan edits and acceptance lines to the plan file,
 * retries to the story records — then marks each in `retro.md` (applied, or not and why)
 * and keeps the outcomes, so no fix is applied twice.
 */
export async function applyApprovedRetro(input: {
  readonly store: FileStateStore;
  /** The plan file of the run (absolute) and its text. */
  readonly planPath: string;
  readonly markdown: string;
  readonly plan: Plan;
  readonly options: PlanOptions;
  readonly emit: (line: string) => void;
}): Promise<AppliedRetro> {
  const { store } = input;
  const proposal = await readProposal(store);
  const mdPath = join(store.dir, RETRO_FILE);
  if (proposal === null || !existsSync(mdPath)) return { planChanged: false };
  const ticked = tickedFixes((await readText(mdPath)) ?? '', proposal);
  const pending = pendingFixes(proposal, ticked);
  if (pending.length === 0) return { planChanged: false };
  const now = new Date().toISOString();
  const records = new Map((await store.listStories()).map((r) => [r.story, r]));
  const planned = applyPlanFixes({
    markdown: input.markdown,
    plan: input.plan,
    proposal,
    fixes: pending,
    records,
    options: input.options,
    now,
  });
  const outcomes: Record<string, FixOutcome> = { ...proposal.outcomes };
  for (const [story, outcome] of planned.outcomes) outcomes[story] = outcome;
  const planChanged = planned.markdown !== input.markdown;
  if (planChanged) await writeWhole(input.planPath, planned.markdown);
  for (const fix of pending) {
    if (fix.kind !== 'retry') continue;
    const retried = retriedRecord(records.get(fix.story), fix.note);
    if (retried.ok) {
      await store.writeStory(retried.record);
      outcomes[fix.story] = { applied: true, at: now };
    } else {
      outcomes[fix.story] = { applied: false, at: now, reason: retried.reason };
    }
  }
  for (const fix of pending) {
    const outcome = outcomes[fix.story];
    if (outcome === undefined) continue;
    input.emit(
      outcome.applied
        ? `retro: applied the ${fix.kind} fix of ${fix.story}${fix.kind === 'retry' ? '' : ` to ${basename(input.planPath)}`}`
        : `retro: the ${fix.kind} fix of ${fix.story} was not applied: ${outcome.reason}`,
    );
  }
  const updated: RetroProposal = { ...proposal, outcomes };
  await store.writeJson(RETRO_JSON, updated);
  await store.writeText(RETRO_FILE, renderRetro(updated, { ticked, applyWith: APPLY_WITH }));
  return { planChanged };
}
