/**
 * Small, locale-independent formatters shared by every report, so a figure
 * reads the same in report.md, a PR comment and the board.
 */
import { EpicflowError } from '../errors.js';

const TOKEN_UNITS: readonly (readonly [number, string])[] = [
  [1e3, 'k'],
  [1e6, 'M'],
  [1e9, 'B'],
];

/** Three significant digits, trailing zeros dropped: 1234567 → `1.23M`, 40000 → `40k`, 999 → `999`. */
export function formatTokens(tokens: number): string {
  const n = Math.max(0, Math.round(tokens));
  let shown = String(n);
  if (n < 1000) return shown;
  // Smallest unit that keeps the value under 1000 once rounded (999,999 is `1M`, not `1000k`).
  for (const [size, unit] of TOKEN_UNITS) {
    const value = Number((n / size).toPrecision(3));
    shown = `${value}${unit}`;
    if (value < 1000) break;
  }
  return shown;
}

/** US dollars with cents and thousands separators: `$1,234.50`; a non-zero amount under a cent is `<$0.01`. */
export function formatUsd(usd: number): string {
  if (usd > 0 && usd < 0.005) return '<$0.01';
  const [whole = '0', cents = '00'] = Math.abs(usd).toFixed(2).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${usd < 0 ? '-' : ''}$${grouped}.${cents}`;
}

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** A human duration: `45s`, `4m 05s`, `1h 04m`, `2d 03h`. Negative durations count as zero. */
export function formatDuration(ms: number): string {
  const seconds = Math.floor(Math.max(0, ms) / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${pad2(seconds % 60)}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h ${pad2(minutes % 60)}m`;
  return `${Math.floor(hours / 24)}d ${pad2(hours % 24)}h`;
}

/** Parses an ISO time of the report input; a malformed one is a bug upstream, not a user error. */
export function parseIsoTime(iso: string, field: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) {
    throw new EpicflowError('internal', `report input: ${field} is not an ISO time: "${iso}"`);
  }
  return ms;
}

/** `2026-11-30 14:00 UTC`. */
export function formatUtcDateTime(iso: string, field: string): string {
  const at = new Date(parseIsoTime(iso, field)).toISOString();
  return `${at.slice(0, 10)} ${at.slice(11, 16)} UTC`;
}

/** `14:00 UTC` on the same UTC day as `nowIso`, else `2026-12-01 14:00 UTC`. */
export function formatUtcTime(iso: string, nowIso: string): string {
  const full = formatUtcDateTime(iso, 'halt until');
  const today = formatUtcDateTime(nowIso, 'now').slice(0, 10);
  return full.startsWith(today) ? full.slice(11) : full;
}
