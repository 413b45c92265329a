/**
 * The retro use case: one read-only model call over the evidence of an epic's failed
 * and held stories. The executor (one with the judge role) runs on a read-only checkout
 * of the epic head, as a planner does: whatever it changes there, commits included, is
 * discarded and noted, and git's configuration is put back. Its answer is read by
 * `core/retro` (JSON, one repair re-ask). Nothing here applies a fix: the caller writes
 * the proposal for people to approve.
 */
import type { EpicflowConfig, ExecutorConfig } from '../core/config/types.js';
import type { RunRecord } from '../core/executor.js';
import type { Plan, UsageEntry } from '../core/model.js';
import { describeGitConfigRestore } from '../core/perimeter/index.js';
import {
  buildRetroPrompt,
  readRetroAnswer,
  type RetroFix,
  type RetroSubject,
} from '../core/retro/index.js';
import { shortDetail } from '../core/story/index.js';
import { priceUsage } from '../core/usage/index.js';
import { discardChanges, type PlanningGit } from './plan-epic.js';
import type { ExecutorLookup } from './ports.js';
import { buildTurnRequest } from './turn-request.js';
import { mergeUsage } from './usage.js';

/** `EPICFLOW_STORY` of a retro turn. */
const RETRO_STORY = 'retro';

interface RetroRequest {
  readonly epic: string;
  readonly plan: Plan;
  readonly subjects: readonly RetroSubject[];
  /** The commit the executor reads (the epic head). */
  readonly base: string;
  readonly executor: ExecutorConfig;
  readonly config: EpicflowConfig;
  /** The executor's resolved environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Its isolated home. */
  readonly home: string;
}

interface RetroPorts {
  readonly git: PlanningGit;
  readonly executors: ExecutorLookup;
  readonly emit: (message: string) => void;
  readonly signal?: AbortSignal | undefined;
}

type RetroOutcome =
  | {
      readonly kind: 'proposed';
      /** Rounds answered (2: a repair re-ask was needed). */
      readonly rounds: number;
      readonly fixes: readonly RetroFix[];
      readonly leftOut: readonly string[];
      readonly usage: readonly UsageEntry[];
      /** Changes discarded and git configuration restored. */
      readonly notes: readonly string[];
    }
  | {
      readonly kind: 'failed';
      readonly reason: string;
      readonly usage: readonly UsageEntry[];
      readonly notes: readonly string[];
    };

/** Rounds of a retro call: the answer, and one repair re-ask when it cannot be read. */
const RETRO_ROUNDS = 2;

export async function proposeRetro(
  request: RetroRequest,
  ports: RetroPorts,
): Promise<RetroOutcome> {
  const tree = await ports.git.checkout(request.base);
  const { executor, config } = request;
  let usage: UsageEntry[] = [];
  const notes: string[] = [];
  try {
    let repairError: string | undefined;
    for (let round = 1; round <= RETRO_ROUNDS; round++) {
      ports.emit(`round ${round}: ${executor.id} reading the evidence`);
      const prompt = buildRetroPrompt({
        epic: request.epic,
        plan: request.plan,
        subjects: request.subjects,
        repairError,
      });
      const snapshot = await tree.snapshotGitConfig();
      let result: RunRecord;
      try {
        result = await ports.executors(executor).runTurn(
          buildTurnRequest(
            {
              epic: request.epic,
              executorEnv: { [executor.id]: request.env },
              silenceMs: config.timeouts.silenceMs,
            },
            executor,
            {
              story: RETRO_STORY,
              round,
              role: 'judge',
              prompt,
              worktree: tree.path,
              timeoutMs: config.timeouts.storyMs,
              home: request.home,
            },
          ),
          ports.signal,
        );
      } finally {
        const restored = await tree.restoreGitConfig(snapshot);
        if (restored.length > 0) {
          const note = describeGitConfigRestore(restored, `round ${round} (${executor.id} retro)`);
          notes.push(note);
          ports.emit(note);
        }
      }
      usage = mergeUsage(usage, priceUsage(result.usage, config.prices));
      await discardChanges(
        tree,
        request.base,
        `round ${round}, ${executor.id}`,
        notes,
        ports,
        'retro',
      );
      if (result.outcome !== 'ok') {
        return {
          kind: 'failed',
          reason: `the retro turn of ${executor.id} ended ${result.outcome}: ${shortDetail(result.detail, 1)}`,
          usage,
          notes,
        };
      }
      const answer = readRetroAnswer(result.finalMessage, request.subjects);
      if (answer.ok) {
        return {
          kind: 'proposed',
          rounds: round,
          fixes: answer.fixes,
          leftOut: answer.leftOut,
          usage,
          notes,
        };
      }
      repairError = answer.error;
      ports.emit(`round ${round}: the answer of ${executor.id} could not be read: ${answer.error}`);
    }
    return {
      kind: 'failed',
      reason: `the answer of ${executor.id} could not be read after a repair re-ask: ${repairError ?? ''}`,
      usage,
      notes,
    };
  } finally {
    await ports.git.release(tree);
  }
}
