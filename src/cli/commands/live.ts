/**
 * `epicflow run` on a terminal: the lanes scroll as usual, and below them a compact
 * board of the epic's stories and one live line (stories done of all, what runs,
 * the time since the run started, what the epic has cost so far), redrawn in place
 * after each event and every second while agents work. Not on a terminal: plain
 * lines only (`formatEvent`), nothing redrawn.
 */
import { usageTotals } from '../../core/epic/rules.js';
import type { StoryRecord } from '../../core/model.js';
import { formatDuration, formatUsd } from '../../core/report/format.js';
import type { EngineEvent } from '../../engine/ports.js';

/** One line per event: `[story] message`, or `epicflow: message` for the epic. */
export function formatEvent(event: EngineEvent): string {
  return event.story === undefined
    ? `epicflow: ${event.message}`
    : `[${event.story}] ${event.message}`;
}

/** What the live line tells. */
interface LiveFacts {
  readonly done: number;
  readonly total: number;
  readonly running: readonly string[];
  readonly elapsedMs: number;
  /** What the epic's records spent so far (usage without a known price counts $0). */
  readonly usd: number;
  /** Some usage has a price. */
  readonly priced: boolean;
  /** Some usage was estimated, not measured. */
  readonly estimated: boolean;
}

/** `epicflow: 2/5 done · running: api, ui · 3m 05s · $1.23 spent`. */
export function renderLiveLine(f: LiveFacts): string {
  const running = f.running.length === 0 ? 'nothing running' : `running: ${f.running.join(', ')}`;
  const cost = f.priced
    ? `${formatUsd(f.usd)}${f.estimated ? ' (partly estimated)' : ''} spent`
    : 'no cost known yet';
  return `epicflow: ${f.done}/${f.total} done · ${running} · ${formatDuration(f.elapsedMs)} · ${cost}`;
}

export class LiveBoard {
  private readonly status = new Map<string, string>();
  private readonly records = new Map<string, StoryRecord>();
  private total = 0;
  private drawn = 0;
  private readonly started: number;

  constructor(
    private readonly write: (s: string) => void,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.started = now();
  }

  /** The epic's stories, and their records as the run starts (what earlier runs spent). */
  start(stories: readonly string[], records: readonly StoryRecord[]): void {
    this.total = stories.length;
    const byId = new Map(records.map((r) => [r.story, r]));
    for (const id of stories) {
      const r = byId.get(id);
      if (r !== undefined) this.records.set(id, r);
      // A record left `active` by an earlier run is not running now.
      if (!this.status.has(id)) this.status.set(id, r?.status === 'done' ? 'done' : 'planned');
    }
  }

  /** A story's record as it was just saved (its usage so far). */
  record(record: StoryRecord): void {
    this.records.set(record.story, record);
  }

  event(event: EngineEvent): void {
    const status = event.data?.status;
    if (event.story !== undefined && typeof status === 'string')
      this.status.set(event.story, status);
    else if (event.story !== undefined && !this.status.has(event.story))
      this.status.set(event.story, 'planned');
    this.draw(`${formatEvent(event)}\n`);
  }

  /** Redraws the board and the live line (the elapsed time moves on). */
  tick(): void {
    this.draw('');
  }

  facts(): LiveFacts {
    const statuses = [...this.status.values()];
    const totals = usageTotals(this.records.values());
    return {
      done: statuses.filter((s) => s === 'done').length,
      total: Math.max(this.total, this.status.size),
      running: [...this.status].filter(([, s]) => s === 'active').map(([id]) => id),
      elapsedMs: this.now() - this.started,
      usd: totals.usd,
      priced: totals.priced,
      estimated: totals.estimated,
    };
  }

  /** Moves up over the old board, clears it, prints the lane line, draws the board again. */
  private draw(lane: string): void {
    const erase = this.drawn > 0 ? `\u001b[${this.drawn}A\u001b[J` : '';
    const board = [...this.status].map(([id, s]) => `  ${s.padEnd(7)} ${id}`);
    const lines = [...board, renderLiveLine(this.facts())];
    this.drawn = lines.length;
    this.write(`${erase}${lane}${lines.map((l) => `${l}\n`).join('')}`);
  }
}
