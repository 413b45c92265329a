/**
 * What a coder says it verified, against what it ran. A reply may end with lines
 * `verified: <command>` (and `confidence: low`); each claimed command is looked for
 * among the shell commands of the turn's own event stream. A claim with no such
 * command is a fabricated status; an executor whose output shows no tool calls
 * leaves its claims "not checked", never "verified". Claims are text to compare and
 * quote: nothing in them is ever run.
 */

/** Notes of this kind are evidence the judge reads first. */
const EVIDENCE_PREFIXES = ['fabricated status:', 'not checked:', 'confidence: low'] as const;

interface Claims {
  /** The commands the reply says it ran, as written (trimmed, inner spaces collapsed). */
  readonly verified: readonly string[];
  readonly lowConfidence: boolean;
}

const VERIFIED = /^\s*[-*]?\s*verified:\s*(.+?)\s*$/i;
const LOW = /^\s*[-*]?\s*confidence:\s*low\b/i;

/** One command as compared: backticks around it dropped, whitespace collapsed. */
function normal(command: string): string {
  return command
    .trim()
    .replace(/^`+|`+$/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

export function parseClaims(finalMessage: string): Claims {
  const verified: string[] = [];
  let lowConfidence = false;
  for (const line of finalMessage.split('\n')) {
    const m = VERIFIED.exec(line);
    if (m?.[1] !== undefined) {
      const command = normal(m[1]);
      if (command !== '' && !verified.includes(command)) verified.push(command);
    } else if (LOW.test(line)) lowConfidence = true;
  }
  return { verified, lowConfidence };
}

/** A claim, quoted for people and prompts: control and format characters escaped. */
function quoted(command: string): string {
  const shown = command.length > 200 ? `${command.slice(0, 200)}…` : command;
  return JSON.stringify(`verified: ${shown}`).replace(
    /[\u0080-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * The evidence notes of one turn (`round` for people): claims that match no command it
 * ran, claims that cannot be checked, and a low confidence. Empty when all is well.
 */
export function checkClaims(
  claims: Claims,
  commandsRun: readonly string[] | undefined,
  who: { readonly round: number; readonly executor: string },
): string[] {
  const notes: string[] = [];
  const turn = `round ${who.round} (${who.executor})`;
  if (claims.verified.length > 0) {
    if (commandsRun === undefined) {
      notes.push(
        `not checked: ${turn} claims ${claims.verified.map(quoted).join(', ')}, and its output shows no tool calls to check them against`,
      );
    } else {
      const ran = commandsRun.map(normal);
      for (const claim of claims.verified) {
        if (!ran.some((command) => command.includes(claim))) {
          notes.push(`fabricated status: ${turn} claims ${quoted(claim)}, but never ran it`);
        }
      }
    }
  }
  if (claims.lowConfidence) notes.push(`confidence: low, says ${turn}`);
  return notes;
}

/** The evidence notes among a story's notes, in order. */
export function evidenceNotes(notes: readonly string[]): string[] {
  return notes.filter((n) => EVIDENCE_PREFIXES.some((p) => n.startsWith(p)));
}
