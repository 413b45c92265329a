/**
 * `epicflow plan draft EPIC.md [--out FILE] [--repo DIR] [--config FILE]`: the
 * planner turns the epic's prose into a plan. Prints the check result as
 * `plan check` does (`valid: N stories in W waves`, then the warnings), what
 * was discarded, and the usage measured. Exit 0 when a valid plan was written,
 * 1 when it is still invalid after the repair rounds (nothing written) or no
 * planner could answer, 2 for usage and config errors.
 */
import type { ExecutorDeps } from '../../adapters/executors/index.js';
import type { UsageEntry } from '../../core/model.js';
import { formatTokens, formatUsd, summarizeUsage } from '../../core/report/index.js';
import { draftPlanLocally, type LocalDraftOptions } from '../../jobs/local/plan-local.js';
import { EXIT_FAILED, EXIT_OK } from '../context.js';
import { planCheckText } from './plan-text.js';
import { onInterrupt } from '../../adapters/process/interrupt.js';

interface PlanDraftIo {
  stdout(s: string): void;
  stderr(s: string): void;
  readonly cwd: string;
}

/** Test hooks; never set by the CLI itself. */
interface PlanDraftHooks {
  /** The environment (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
  /** How the agent CLIs are run (binaries, model API base URLs). */
  readonly executorDeps?: Omit<ExecutorDeps, 'sourceEnv' | 'prices'>;
}

/** One line per violation or warning, control characters made visible. */
export function line(code: string, message: string): string {
  // eslint-disable-next-line no-control-regex
  return `${code}: ${message.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1))}\n`;
}

/**
 * What a planning command says when it writes nothing (`plan draft`, `plan refine`): a plan
 * still invalid after its repair rounds (each violation and must-fix warning), or a planner
 * that failed; the usage line either way. Returns the exit code.
 */
export function notWritten(
  io: Pick<PlanDraftIo, 'stdout' | 'stderr'>,
  outcome:
    | {
        readonly kind: 'invalid';
        readonly rounds: number;
        readonly violations: readonly { code: string; message: string }[];
        readonly mustFix: readonly { code: string; message: string }[];
      }
    | { readonly kind: 'failed'; readonly reason: string },
  usage: string,
  what: string,
  target: string,
): number {
  if (outcome.kind === 'invalid') {
    for (const v of [...outcome.violations, ...outcome.mustFix]) io.stdout(line(v.code, v.message));
    io.stdout(usage);
    io.stderr(
      `error: ${what} is still invalid after ${outcome.rounds} ${outcome.rounds === 1 ? 'round' : 'rounds'}; nothing written to ${target}\n`,
    );
  } else {
    io.stdout(usage);
    io.stderr(`error: ${outcome.reason}; nothing written to ${target}\n`);
  }
  return EXIT_FAILED;
}

/**
 * `planning: 2 rounds by claude; measured 12.3k tokens, $0.04; estimated (characters ÷ 4)
 * ~1k tokens, ~$0.01`: measured and estimated apart, as every report has them.
 */
function planningUsageLine(
  rounds: number,
  executors: readonly string[],
  usage: readonly UsageEntry[],
): string {
  return roundsUsageLine('planning', rounds, executors, usage);
}

/** `<label>: 2 rounds by claude; measured …; estimated …`, as `planningUsageLine`. */
export function roundsUsageLine(
  label: string,
  rounds: number,
  executors: readonly string[],
  usage: readonly UsageEntry[],
): string {
  const summary = summarizeUsage(usage);
  const by = executors.length === 0 ? '' : ` by ${executors.join(', ')}`;
  const parts = [`${rounds} ${rounds === 1 ? 'round' : 'rounds'}${by}`];
  const cost = (usd: number | null, mark: string): string =>
    usd === null ? 'cost unknown' : `${mark}${formatUsd(usd)}`;
  if (summary.measured.tokens > 0) {
    parts.push(
      `measured ${formatTokens(summary.measured.tokens)} tokens, ${cost(summary.measured.costUsd, '')}`,
    );
  }
  if (summary.estimated.tokens > 0) {
    parts.push(
      `estimated (characters ÷ 4) ~${formatTokens(summary.estimated.tokens)} tokens, ${cost(summary.estimated.costUsd, '~')}`,
    );
  }
  if (parts.length === 1) parts.push('no usage recorded');
  return `${label}: ${parts.join('; ')}\n`;
}

export async function planDraftCommand(
  options: LocalDraftOptions,
  io: PlanDraftIo,
  hooks: PlanDraftHooks = {},
): Promise<number> {
  const interrupt = onInterrupt({ secondQuits: true });
  try {
    const result = await draftPlanLocally(options, {
      cwd: io.cwd,
      env: hooks.env ?? process.env,
      onEvent: (message) => io.stderr(`epicflow: ${message}\n`),
      // Who the planner runs as, said once, with the planning steps.
      onWarning: (line) => io.stderr(`epicflow: ${line}\n`),
      interrupt: interrupt.signal,
      executorDeps: hooks.executorDeps,
    });
    const { outcome } = result;
    for (const note of outcome.notes) io.stdout(`note: ${note}\n`);
    const usage = planningUsageLine(outcome.rounds, outcome.executors, outcome.usage);
    switch (outcome.kind) {
      case 'planned':
        io.stdout(planCheckText({ ok: true, plan: outcome.plan, violations: [] }));
        for (const w of outcome.warnings) io.stdout(`warning: ${line(w.code, w.message)}`);
        for (const r of outcome.renamed)
          io.stdout(`kept id: ${r.to} (the planner called it ${r.from})\n`);
        io.stdout(`wrote ${result.shownOut}\n${usage}`);
        return EXIT_OK;
      case 'invalid':
      case 'failed':
        return notWritten(io, outcome, usage, 'the plan', result.shownOut);
    }
  } finally {
    interrupt.release();
  }
}
