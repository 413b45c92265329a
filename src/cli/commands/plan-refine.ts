/**
 * `epicflow plan refine PLAN.md "<feedback>" [--epic ID] [--repo DIR] [--config FILE]`: a
 * refine round on this machine, its planner isolated as plan draft's is. Prints the check result of the combined plan (as
 * `plan check` does), the stories added, what the planner could not place (`not planned:`),
 * the file written and the usage. Exit 0 when the plan was refined (or nothing could be
 * placed: the not-planned list says why), 1 when still invalid after the repair rounds or no
 * planner could answer (nothing written), 2 for usage and config errors.
 */
import { refineLocally, type LocalRefineOptions } from '../../jobs/local/refine-local.js';
import { EXIT_OK, type CliContext } from '../context.js';
import { onInterrupt } from '../../adapters/process/interrupt.js';
import { line, notWritten, roundsUsageLine } from './plan-draft.js';
import { planCheckText } from './plan-text.js';

export async function planRefineCommand(
  options: LocalRefineOptions,
  ctx: CliContext,
): Promise<number> {
  const interrupt = onInterrupt({ secondQuits: true });
  const io = ctx.io;
  try {
    const result = await refineLocally(options, {
      cwd: io.cwd,
      env: (io.env as NodeJS.ProcessEnv | undefined) ?? process.env,
      onEvent: (message) => io.stderr(`epicflow: ${message}\n`),
      // Who the planner runs as, said once, with the planning steps.
      onWarning: (line) => io.stderr(`epicflow: ${line}\n`),
      interrupt: interrupt.signal,
    });
    const { outcome } = result;
    for (const note of outcome.notes) io.stdout(`note: ${note}\n`);
    const usage = roundsUsageLine('planning', outcome.rounds, outcome.executors, outcome.usage);
    switch (outcome.kind) {
      case 'planned':
        io.stdout(planCheckText({ ok: true, plan: outcome.plan, violations: [] }));
        for (const w of outcome.warnings) io.stdout(`warning: ${line(w.code, w.message)}`);
        if (result.added.length > 0) {
          io.stdout(`refine round ${result.round}: added ${result.added.join(', ')}\n`);
        }
        for (const item of outcome.notPlanned) io.stdout(`not planned: ${item}\n`);
        if (result.notPlannedFile !== undefined) {
          io.stdout(`not planned items kept in ${result.notPlannedFile}\n`);
        }
        io.stdout(
          result.written
            ? `wrote ${options.file}\n${usage}`
            : `nothing added; ${options.file} unchanged\n${usage}`,
        );
        return EXIT_OK;
      case 'invalid':
      case 'failed':
        return notWritten(io, outcome, usage, 'the refined plan', options.file);
    }
  } finally {
    interrupt.release();
  }
}
