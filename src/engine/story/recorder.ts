/** A story's record as it is written after every step, and the effects of decisions. */
import type { Story, StoryRecord } from '../../core/model.js';
import { findingsLogName, renderFindingsLog } from '../../core/review/index.js';
import type { StoryEffect } from '../../core/story/index.js';
import type { EpicContext } from '../context.js';
import { NO_TRACE, type TraceAttributes, type TraceSpan } from '../trace.js';
import { StoryLogs } from './logs.js';

/** The record writer of one story: every change is saved at once, atomically. */
export class Recorder {
  /** The story's logs of this run (the whole output of setup, gates and turns). */
  readonly logs: StoryLogs;

  constructor(
    private readonly ctx: EpicContext,
    public record: StoryRecord,
    /** The story's span: each timed step is a span inside it. */
    readonly span: TraceSpan = NO_TRACE,
  ) {
    this.logs = new StoryLogs(ctx, record.story, record.attempt);
  }

  async save(
    patch: Partial<StoryRecord>,
    clear: readonly (
      'reason' | 'outgrown' | 'finishedAt' | 'progress' | 'tasks' | 'deferred'
    )[] = [],
  ): Promise<void> {
    const next: Record<string, unknown> = { ...this.record, ...patch };
    for (const key of clear) delete next[key];
    this.record = next as unknown as StoryRecord;
    await this.ctx.ports.state.writeStory(this.record);
  }

  /**
   * Runs one step of the story, timed in its record and traced as a span `phase` with
   * `attributes`, and what `after` reads from its result.
   */
  async time<T>(
    phase: string,
    work: () => Promise<T>,
    attributes?: TraceAttributes,
    after?: (result: T) => TraceAttributes,
  ): Promise<T> {
    const start = this.ctx.ports.clock.now().getTime();
    const span = this.span.child(phase, attributes);
    let failure: string | undefined;
    try {
      const result = await work();
      if (after !== undefined) span.set(after(result));
      return result;
    } catch (e) {
      failure = e instanceof Error ? e.message : String(e);
      throw e;
    } finally {
      span.end(failure);
      const ms = this.ctx.ports.clock.now().getTime() - start;
      const timings = { ...this.record.timings, [phase]: (this.record.timings[phase] ?? 0) + ms };
      await this.save({ timings });
    }
  }
}

/** Tells and records what a decision says, in its order. */
export async function performEffects(
  ctx: EpicContext,
  story: Story,
  rec: Recorder,
  effects: readonly StoryEffect[],
): Promise<void> {
  for (const effect of effects) {
    switch (effect.kind) {
      case 'say':
        ctx.emit('story', effect.message, story.id, effect.data);
        break;
      case 'evaluation': {
        const evaluations = [
          ...(rec.record.evaluations ?? []),
          { ...effect.evaluation, attempt: rec.record.attempt },
        ];
        await rec.save({ evaluations });
        await ctx.ports.logs?.writeText(
          findingsLogName(story.id),
          renderFindingsLog(story.id, evaluations),
        );
        break;
      }
      case 'note':
        await rec.save({ notes: [...rec.record.notes, ...effect.notes] });
        break;
      case 'executors':
        await rec.save({ executors: [...effect.executors] });
        break;
      case 'halt':
        ctx.setHalt(effect.halt);
        break;
      case 'progress':
        await rec.save({ progress: effect.progress });
        break;
      case 'deferred':
        if (effect.findings.length === 0) await rec.save({}, ['deferred']);
        else await rec.save({ deferred: [...effect.findings] });
        break;
    }
  }
}
