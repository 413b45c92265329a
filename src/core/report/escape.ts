/**
 * Markdown escaping for text that comes from people (story titles, reasons,
 * notes): it must never open HTML, break a table row or a list item.
 */

const HTML_ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** One line of inline text: whitespace runs (newlines included) and control characters become one space; `& < >` are entities. */
export function inlineText(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex -- control characters are exactly what we strip
      .replace(/[\s\u0000-\u001f\u007f\u2028\u2029]+/g, ' ')
      .trim()
      .replace(/[&<>]/g, (c) => HTML_ENTITIES[c] ?? c)
  );
}

/** A table cell: inline text with `|` escaped so it cannot split the row. */
export function cellText(text: string): string {
  return inlineText(text).replace(/\|/g, '\\|');
}

/**
 * A table cell of our own figures (`1k tokens, <$0.01`): never HTML, so nothing becomes an
 * entity (which a terminal, a plain-text reader of report.md or a code view would show as
 * `&lt;`); only `|` is escaped so the row holds.
 */
export function figureCell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** Cuts raw text to `max` characters (code points), marking the cut with `…`. */
export function capText(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/** A code span for our own identifiers (ids, branch names): backticks and whitespace removed so the span always closes. */
export function code(text: string): string {
  return `\`${text.replace(/[`\s]+/g, '')}\``;
}

/** A markdown link whose URL cannot end the link early. */
export function link(label: string, url: string): string {
  const safe = url.replace(
    /[\s()<>]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
  return `[${label}](${safe})`;
}
