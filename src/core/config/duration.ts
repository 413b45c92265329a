/**
 * Durations in the config: a number of seconds (`90`), or a string of hours,
 * minutes and seconds in that order (`90s`, `20m`, `2h`, `1h30m`).
 */

/** At least one part, each part optional, in h-m-s order. */
export const DURATION_PATTERN = /^(?!$)(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/** Node timers overflow above 2^31-1 ms (about 24.8 days) and would fire at once. */
export const MAX_DURATION_MS = 2_147_483_647;

/** Milliseconds of a duration, or undefined when it is not one (or not positive). */
export function durationToMs(value: number | string): number | undefined {
  let ms: number;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined;
    ms = Math.round(value * 1000);
  } else {
    const match = DURATION_PATTERN.exec(value);
    if (match === null) return undefined;
    const [, h = '0', m = '0', s = '0'] = match;
    ms = ((Number(h) * 60 + Number(m)) * 60 + Number(s)) * 1000;
  }
  return ms > 0 && ms <= MAX_DURATION_MS ? ms : undefined;
}

/** `300ms`, `90s`, `20m`, `1h 30m`: how long a configured limit was, for people. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60 || s % 60 !== 0) return `${s}s`;
  const m = s / 60;
  if (m < 60) return `${m}m`;
  return m % 60 === 0 ? `${m / 60}h` : `${Math.floor(m / 60)}h ${m % 60}m`;
}
