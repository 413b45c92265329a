/**
 * `text` as one word of a POSIX shell command line: as it is when it is made only of
 * characters no shell reads specially (`src`, `app-1.2`), else in single quotes, each
 * quote in it written as `'\''`.
 */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_.@+/-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
