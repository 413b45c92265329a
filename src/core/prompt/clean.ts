/**
 * Issue text is data. Before it reaches a prompt, HTML comments (which hide
 * text from people reading the issue) and invisible or bidirectional control
 * characters (which make text read differently than it runs) are removed.
 */
import { sanitizeIssueText } from '../epic/sanitize.js';

/** The one sanitiser of issue text, shared with the App's comments. */
export function cleanText(text: string): string {
  return sanitizeIssueText(text);
}

/** The last `max` characters of a text, marked when cut. */
export function tail(text: string, max: number): string {
  if (text.length <= max) return text;
  return `[… ${text.length - max} earlier characters cut]\n${text.slice(text.length - max)}`;
}

/** The first `max` UTF-8 bytes of a text (never splitting a character), marked when cut. */
export function capBytes(text: string, max: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= max) return text;
  const cut = new TextDecoder('utf-8', { fatal: false }).decode(bytes.slice(0, max));
  // A cut inside a multi-byte character decodes to U+FFFD at the end: drop it.
  return `${cut.replace(/\uFFFD$/, '')}\n[… cut at ${max} bytes]`;
}

/** Issue text on one line, cleaned. */
export function oneLine(text: string): string {
  return cleanText(text).replace(/\s+/g, ' ').trim();
}

/** Issue text as a markdown quote, cleaned. */
export function quote(text: string): string {
  return cleanText(text)
    .trim()
    .split('\n')
    .map((l) => (l.length > 0 ? `> ${l}` : '>'))
    .join('\n');
}

export function bullets(items: readonly string[]): string {
  return items.map((i) => `- ${i}`).join('\n');
}
