/**
 * Typed errors with stable tags. Code decides by `tag`, never by message text;
 * people see them through `describeError`, the one place they are rendered.
 */
export type ErrorTag =
  | 'usage'
  | 'config'
  | 'plan'
  | 'git'
  | 'state'
  | 'executor'
  | 'github'
  | 'halt'
  /** Untrusted code cannot be kept away from credentials (no user to run it as, a probe leaked). */
  | 'isolation'
  /** A work job's result (its record or its objects) that the publish side refuses to merge. */
  | 'result'
  | 'internal';

export class EpicflowError extends Error {
  readonly tag: ErrorTag;
  /** Extra lines for people: offending fields, process output tails. */
  readonly details: readonly string[];

  constructor(
    tag: ErrorTag,
    message: string,
    options: { details?: readonly string[]; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EpicflowError';
    this.tag = tag;
    this.details = options.details ?? [];
  }
}

export function isEpicflowError(e: unknown, tag?: ErrorTag): e is EpicflowError {
  return e instanceof EpicflowError && (tag === undefined || e.tag === tag);
}

/** The one renderer of errors for people: message, then detail lines indented. */
export function describeError(e: unknown): string {
  if (e instanceof EpicflowError) {
    return [e.message, ...e.details.map((d) => `  ${d}`)].join('\n');
  }
  if (e instanceof Error) return `internal error: ${e.message}`;
  return `internal error: ${String(e)}`;
}

/** Lines of text as one line: each line trimmed, blank ones left out, joined with ` | `. */
export function oneLine(text: string): string {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .join(' | ');
}

/** An error as one line (a record's reason, a story's stop): `describeError`'s lines, joined. */
export function describeErrorLine(e: unknown): string {
  return oneLine(describeError(e));
}
