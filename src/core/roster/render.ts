/** `epicflow roster`: one line per executor, in config order, aligned for people. */
import type { ExecutorConfig } from '../config/types.js';
import { activeExclusion, busySlots, returnTime, type RosterState } from './index.js';

/** Busy coder seats per executor id, when known (a run in progress). */
export type BusyCounts = Readonly<Record<string, number>>;

export function renderRoster(
  executors: readonly ExecutorConfig[],
  state: RosterState,
  now: Date,
  busy: BusyCounts = {},
): string {
  const rows = executors.map((e) => {
    const exclusion = activeExclusion(state, e.id, now);
    const used = Math.max(busy[e.id] ?? 0, busySlots(state, e.id));
    return [
      e.id,
      e.harness,
      e.model ?? '-',
      e.roles.join(','),
      `${used}/${e.slots}`,
      String(e.priority),
      exclusion === null ? 'available' : `${exclusion.reason} (${returnTime(exclusion)})`,
    ];
  });
  const header = ['executor', 'harness', 'model', 'roles', 'slots', 'priority', 'status'];
  const table = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...table.map((r) => (r[i] ?? '').length)));
  return table
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .map((l) => `${l}\n`)
    .join('');
}
