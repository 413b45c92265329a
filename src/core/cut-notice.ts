/**
 * The one wording for output that was shortened before people see it (a gate's
 * or an agent's log): shortened text always says so in its first line, so a
 * reader never mistakes a tail for the whole. Output that a decision is read
 * from is never shortened at all.
 */

/** `512 B`, `64.0 KiB`, `3.2 MiB`, `1.5 GiB`. */
export function formatBytes(bytes: number): string {
  const n = Math.max(0, Math.round(bytes));
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit] as string}`;
}

/** The first line of a shortened log: `[… 3.2 MiB cut; last 1.0 MiB shown]`. */
export function cutNotice(cutBytes: number, shownBytes: number): string {
  return `[… ${formatBytes(cutBytes)} cut; last ${formatBytes(shownBytes)} shown]`;
}

const NOTICE = /^\[… \d+(?:\.\d)? [KMGT]?i?B cut; last \d+(?:\.\d)? [KMGT]?i?B shown\]$/;

/** Whether a line is a `cutNotice` (its numbers differ from run to run of the same command). */
export function isCutNotice(line: string): boolean {
  return NOTICE.test(line.trim());
}
