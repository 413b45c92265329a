/**
 * Issue text is data. Before it reaches a prompt, HTML comments (which hide
 * text from people reading the issue) and invisible or bidirectional control
 * characters (which make text read differently than it runs) are removed.
 */

// Zero-width and invisible format characters, bidi embeddings/overrides/isolates,
// the BOM, soft hyphen, and C0/C1 controls other than tab and newline.
const INVISIBLE =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g;

export function cleanText(text: string): string {
  let out = text.replace(/\r\n?/g, '\n');
  // Remove complete comments, then an unterminated one to the end.
  out = out.replace(/<!--[\s\S]*?-->/g, '').replace(/<!--[\s\S]*$/, '');
  return out.replace(INVISIBLE, '');
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
