/**
 * The line the status comment starts with while epicflow waits for GitHub's rate limit:
 * when it goes on by itself, so nobody types a command. The next decision writes the
 * status comment afresh, without it.
 */
const PREFIX = '> ⏳ **Waiting for GitHub’s rate limit';

/** `14:02 UTC`, or `Dec 2, 14:02 UTC` when not today (by `now`'s UTC date). */
function clockTime(until: Date, now: Date): string {
  const hhmm = until.toISOString().slice(11, 16);
  if (until.toISOString().slice(0, 10) === now.toISOString().slice(0, 10)) return `${hhmm} UTC`;
  const day = until.toLocaleDateString('en-US', {
    month: 'short',
    day: 'numeric',
    timeZone: 'UTC',
  });
  return `${day}, ${hhmm} UTC`;
}

/** The status comment's body with the waiting note first (a previous note replaced). */
export function withRateLimitNote(body: string, until: Date, now: Date): string {
  const note =
    `${PREFIX} until ${clockTime(until, now)}.** GitHub refused a request for a rate limit; ` +
    'epicflow goes on by itself then (nothing to do).';
  const rest = withoutRateLimitNote(body);
  return rest === '' ? note : `${note}\n\n${rest}`;
}

/** The body without a waiting note. */
function withoutRateLimitNote(body: string): string {
  if (!body.startsWith(PREFIX)) return body;
  const end = body.indexOf('\n\n');
  return end === -1 ? '' : body.slice(end + 2);
}
