/**
 * The launch summary is published only when its text changes, so a loop that
 * reconciles after every event does not repeat the same line.
 */
export function nextSummary(prev: string | undefined, line: string): string | undefined {
  return line === prev ? undefined : line;
}

/** Remembers the last line published; `update` returns a line only when it changed. */
export class LaunchSummary {
  private last: string | undefined;

  update(line: string): string | undefined {
    const next = nextSummary(this.last, line);
    this.last = line;
    return next;
  }
}
