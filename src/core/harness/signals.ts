/**
 * Shared pieces of the per-CLI parsers: reading JSONL streams, classifying a
 * CLI's OWN error message (never tool output: callers pass only text taken from
 * the CLI's error events or error lines), and reading reset times.
 */
import type { OutcomeClass } from '../executor.js';
import type { ParsedRun, ParsedUsage } from './types.js';

/** The JSON objects among the lines of a stream; anything else is skipped. */
export function jsonLines(text: string): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    try {
      const v: unknown = JSON.parse(t);
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
        events.push(v as Record<string, unknown>);
      }
    } catch {
      // a non-JSON line (a warning the CLI printed): not an event
    }
  }
  return events;
}

export function asRecord(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

export function asString(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** A non-negative finite number, else 0: token fields are absent or null at times. */
export function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

export function numOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

const USAGE_LIMIT = [
  /hit your (?:usage |session |weekly |opus |sonnet )?limit/i,
  /usage limit (?:reached|has been reached)/i,
  /usage_limit_reached/i,
  /quota exceeded/i,
  /exceeded your current quota/i,
  /insufficient_quota/i,
  /usage_not_included/i,
  /out of credits/i,
  /credit balance is too low/i,
  /TerminalQuotaError|QUOTA_EXHAUSTED/,
  /exhausted your capacity/i,
];
const AUTH = [
  /\b401\b/,
  /unauthori[sz]ed/i,
  /authentication[_ ](?:error|failed)/i,
  /(?:invalid|incorrect) (?:x-)?api[ -]key/i,
  /invalid_api_key/i,
  /api key not valid/i,
  /oauth_org_not_allowed/i,
  /\b403\b/,
  /\bforbidden\b/i,
  /not logged in/i,
  /please run \/login/i,
  /\bUNAUTHENTICATED\b|\bPERMISSION_DENIED\b/,
  /ProviderAuthError|AuthenticationError/,
];
const RATE_LIMITED = [/\b429\b/, /rate[ _-]?limit/i, /too many requests/i];
/** A request to the model that timed out on the network (not epicflow's own timeout). */
export const NETWORK_TIMEOUT =
  /\bETIMEDOUT\b|\bESOCKETTIMEDOUT\b|\bUND_ERR_(?:CONNECT|HEADERS|BODY)_TIMEOUT\b|(?:request|connection|connect|socket|read|network) timed? ?out|network timeout|timeout (?:awaiting|waiting for) (?:response|headers)/i;
const OUTAGE = [
  NETWORK_TIMEOUT,
  /\b5(?:00|02|03|04|29)\b/,
  /overloaded/i,
  /service unavailable/i,
  /internal server error/i,
  /bad gateway/i,
  /gateway time-?out/i,
  /stream disconnected/i,
  /server_error|api_error/i,
  /connection (?:refused|reset|closed)/i,
  /error sending request/i,
  /\bUNAVAILABLE\b|\bINTERNAL\b/,
  /ServiceUnavailableError|InternalServerError|APIConnectionError/,
];

/**
 * Classifies one error message of the CLI itself. Usage limits win over auth,
 * auth over rate limits, rate limits over outages: a quota message often also
 * says "429", an auth failure is never worth a retry. URLs are dropped first so
 * that a port number in one cannot read as a status code.
 */
export function classifyMessage(message: string): OutcomeClass {
  const text = message.replace(/\bhttps?:\/\/\S+/g, '');
  if (USAGE_LIMIT.some((p) => p.test(text))) return 'usage-limit';
  if (AUTH.some((p) => p.test(text))) return 'auth';
  if (RATE_LIMITED.some((p) => p.test(text))) return 'rate-limited';
  if (OUTAGE.some((p) => p.test(text))) return 'outage';
  return 'failed';
}

/** Classification by an HTTP status the CLI reported in a structured field. */
export function classifyStatus(status: number): OutcomeClass | undefined {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate-limited';
  if (status >= 500 && status <= 599) return 'outage';
  return undefined;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** Offset of `timeZone` from UTC at `at`, in ms (positive east of UTC). */
function zoneOffsetMs(at: Date, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(at);
  const get = (type: string): number => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const asUtc = Date.UTC(
    get('year'),
    get('month') - 1,
    get('day'),
    get('hour'),
    get('minute'),
    get('second'),
  );
  return asUtc - Math.floor(at.getTime() / 1000) * 1000;
}

/** The wall-clock time y-m-d h:m in `timeZone`, as an instant. */
function zonedTime(
  y: number,
  month: number,
  d: number,
  h: number,
  m: number,
  timeZone: string,
): Date {
  const guess = new Date(Date.UTC(y, month, d, h, m));
  const first = new Date(guess.getTime() - zoneOffsetMs(guess, timeZone));
  // Re-check once: the offset may differ on the other side of a DST change.
  return new Date(guess.getTime() - zoneOffsetMs(first, timeZone));
}

function to24h(hour: number, ampm: string | undefined): number {
  if (ampm === undefined) return hour;
  const pm = ampm.toLowerCase() === 'pm';
  return (hour % 12) + (pm ? 12 : 0);
}

/**
 * The next instant after `now` showing the given wall-clock time in `timeZone`,
 * or that exact date when month/day (and year) are given.
 */
function nextClock(
  now: Date,
  timeZone: string,
  hour: number,
  minute: number,
  date?: { month: number; day: number; year?: number },
): Date | undefined {
  try {
    const today = new Date(now.getTime() + zoneOffsetMs(now, timeZone));
    if (date !== undefined) {
      const year = date.year ?? today.getUTCFullYear();
      let at = zonedTime(year, date.month, date.day, hour, minute, timeZone);
      // No year and already past: it means next year (a reset around New Year).
      if (date.year === undefined && at.getTime() < now.getTime() - 86_400_000) {
        at = zonedTime(year + 1, date.month, date.day, hour, minute, timeZone);
      }
      return at;
    }
    for (let add = 0; add <= 1; add++) {
      const at = zonedTime(
        today.getUTCFullYear(),
        today.getUTCMonth(),
        today.getUTCDate() + add,
        hour,
        minute,
        timeZone,
      );
      if (at.getTime() > now.getTime()) return at;
    }
    return undefined;
  } catch {
    // An unknown time zone name: no reset time rather than a wrong one.
    return undefined;
  }
}

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  millisecond: 1,
  s: 1000,
  sec: 1000,
  second: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hour: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
};

/** "2 days 17 hours 14 minutes", "3.681s", "2h30m" → milliseconds. */
export function parseDuration(text: string): number | undefined {
  let total = 0;
  let found = false;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)\s*(ms|milliseconds?|[a-z]+)/gi)) {
    const unit = (m[2] ?? '').toLowerCase();
    const factor = DURATION_UNITS[unit] ?? DURATION_UNITS[unit.replace(/s$/, '')];
    if (factor === undefined) break;
    total += Number(m[1]) * factor;
    found = true;
  }
  return found ? Math.round(total) : undefined;
}

/**
 * Reads a reset time from a CLI's limit message. `defaultZone` is the zone of
 * clock times that name none (we run codex with TZ=UTC, so its clock times are UTC).
 */
export function parseResetAt(
  message: string,
  now: Date | undefined,
  defaultZone = 'UTC',
): string | undefined {
  // "usage limit reached|1796032036" (older Claude Code)
  const epoch = /limit reached\|(\d{9,11})\b/i.exec(message);
  if (epoch) return new Date(Number(epoch[1]) * 1000).toISOString();
  if (now === undefined) return undefined;

  // "try again at Dec 3rd, 2026 8:08 PM", "try again at 9:46 AM",
  // "resets 9:47am (UTC)", "resets Dec 5, 4pm (America/Los_Angeles)"
  const clock =
    /(?:try again at|resets?(?: at)?)\s+(?:([A-Za-z]{3})[a-z]*\.? (\d{1,2})(?:st|nd|rd|th)?,?\s+(?:(\d{4}),?\s+)?(?:at\s+)?)?(\d{1,2})(?::(\d{2}))?\s*([ap]m)?(?:\s*\(([^)]+)\))?/i.exec(
      message,
    );
  if (clock && (clock[5] !== undefined || clock[6] !== undefined)) {
    const monthIndex =
      clock[1] === undefined ? -1 : MONTHS.indexOf(clock[1].slice(0, 3).toLowerCase());
    const date =
      monthIndex >= 0
        ? {
            month: monthIndex,
            day: Number(clock[2]),
            ...(clock[3] === undefined ? {} : { year: Number(clock[3]) }),
          }
        : undefined;
    const at = nextClock(
      now,
      clock[7]?.trim() ?? defaultZone,
      to24h(Number(clock[4]), clock[6]),
      Number(clock[5] ?? 0),
      date,
    );
    if (at) return at.toISOString();
  }

  // "try again in 2 days 17 hours", "reset after 2h30m", "retry in 3.681s"
  const rel = /(?:try again in|reset after|resets in|retry in)\s+([0-9][0-9a-z. ,]*)/i.exec(
    message,
  );
  if (rel) {
    const ms = parseDuration((rel[1] ?? '').replace(/,|\band\b/g, ' '));
    if (ms !== undefined) return new Date(now.getTime() + ms).toISOString();
  }
  return undefined;
}

/** The last `max` characters of a text, for details. */
export function tail(text: string, max = 2000): string {
  const t = text.trim();
  return t.length <= max ? t : `…${t.slice(t.length - max)}`;
}

/** What a turn left, whatever way it ended. */
interface TurnLeft {
  readonly finalMessage: string;
  readonly usage: readonly ParsedUsage[];
}

/**
 * A turn that ended on the CLI's own error message: classified by that message (or as
 * `outcome` says), with the time a usage limit names for when it lifts.
 */
export function endedOnError(
  message: string,
  left: TurnLeft,
  now: Date | undefined,
  outcome: OutcomeClass = classifyMessage(message),
): ParsedRun {
  const resetAt = outcome === 'usage-limit' ? parseResetAt(message, now) : undefined;
  return { outcome, ...left, detail: tail(message), ...(resetAt === undefined ? {} : { resetAt }) };
}

/**
 * A turn whose CLI stopped before its own end (`missing`: the event it never printed) and
 * said nothing why: failed, with its exit code.
 */
export function endedUnfinished(
  cli: string,
  missing: string,
  exitCode: number | null,
  left: TurnLeft,
): ParsedRun {
  return {
    outcome: 'failed',
    ...left,
    detail: `${cli} ended without ${missing} (exit code ${exitCode ?? 'none'})`,
  };
}

/**
 * A turn that ended without an error message of its own: done on exit code 0; else failed,
 * with the end of what the CLI printed on stderr, or its exit code when it printed nothing.
 */
export function endedOnExit(
  cli: string,
  exitCode: number | null,
  stderr: string,
  left: TurnLeft,
): ParsedRun {
  if (exitCode === 0) return { outcome: 'ok', ...left, detail: '' };
  return {
    outcome: 'failed',
    ...left,
    detail: tail(stderr) || `${cli} exited with code ${exitCode ?? 'none'}`,
  };
}

/** Drops variables no agent process may see: GitHub and Actions credentials. */
export function withoutGithubTokens(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (
      /^(GITHUB_TOKEN|GH_TOKEN|GH_ENTERPRISE_TOKEN|GITHUB_ENTERPRISE_TOKEN|ACTIONS_RUNTIME_TOKEN|ACTIONS_ID_TOKEN_REQUEST_TOKEN|ACTIONS_ID_TOKEN_REQUEST_URL|ACTIONS_RUNTIME_URL|COPILOT_GITHUB_TOKEN)$/.test(
        k,
      )
    )
      continue;
    out[k] = v;
  }
  return out;
}
