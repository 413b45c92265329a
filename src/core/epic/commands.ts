/**
 * Comment commands (docs/commands.md). A command is the first non-empty line of a
 * comment, so a command quoted (`> /resume`), fenced or indented as code, or
 * hidden in an HTML comment is never one: it would have to come after the
 * quote or fence opener, which already is the first line.
 */
import type { Plan } from '../model.js';
import { code } from '../report/escape.js';
import { sanitizeIssueText } from './sanitize.js';

export type Command =
  /** `deferred`: `/resume deferred`, one follow-up round over the findings judges deferred. */
  | { readonly kind: 'resume'; readonly deferred?: true }
  | { readonly kind: 'approve' }
  | { readonly kind: 'cancel' }
  | { readonly kind: 'status' }
  | { readonly kind: 'help' }
  /** Start a review round from the comments on the epic's pull request. */
  | { readonly kind: 'revise' }
  /** Propose one fix per failed or held story (a retro job), for people to tick. */
  | { readonly kind: 'retro' }
  /** `story` is absent when the command named none (`validateCommand` explains). */
  | { readonly kind: 'retry'; readonly story?: string }
  | { readonly kind: 'skip'; readonly story?: string }
  /** `guidance`: the comment's text after `/plan`, for the planner (untrusted data). */
  | { readonly kind: 'plan'; readonly guidance?: string }
  /** `feedback`: the comment's text after `/refine`, for the planner (untrusted data). */
  | { readonly kind: 'refine'; readonly feedback?: string }
  | { readonly kind: 'unknown'; readonly word: string };

type CommandKind = Command['kind'];

interface CommandHelp {
  readonly usage: string;
  readonly does: string;
}

/** The commands people may use, in the order help lists them. */
const COMMANDS: Readonly<Record<Exclude<CommandKind, 'unknown'>, CommandHelp>> = {
  resume: {
    usage: '/resume [deferred]',
    does:
      'continue the epic: lift a cancel, retry failed stories on their branch, restart changed ones; ' +
      '`/resume deferred`, once every story is done: one follow-up round over the findings the judge deferred',
  },
  approve: {
    usage: '/approve',
    does: 'accept the plan as it stands (check it first): stories start from it',
  },
  retry: { usage: '/retry <story>', does: 'run one failed story again (a new attempt)' },
  skip: {
    usage: '/skip <story>',
    does: 'give up on a story; it counts as done for the stories that depend on it',
  },
  revise: {
    usage: '/revise',
    does: "run the stories the pull request's review comments concern again with those comments (a review round)",
  },
  retro: {
    usage: '/retro',
    does: 'propose one fix per failed or held story (one read-only model call), as a comment with a checkbox per fix; `/resume` applies the ticked ones',
  },
  plan: {
    usage: '/plan [guidance]',
    does: "draft the plan again with epicflow's planner (the guidance goes to it); unchanged stories keep their ids and progress",
  },
  refine: {
    usage: '/refine <feedback>',
    does: "ask epicflow's planner for more stories from the feedback, added to the plan as it stands (new ids r1-…, r2-…); approve them like any plan",
  },
  cancel: { usage: '/cancel', does: 'start no more stories; running ones finish' },
  status: { usage: '/status', does: 'refresh the status comment' },
  help: { usage: '/help', does: 'show this list' },
};

/** Longest command word echoed back in a reply. */
const WORD_MAX = 40;

/**
 * The command on the comment's first non-empty line, or null when that line
 * is not a command. Up to three leading spaces are allowed (four make it a
 * code block in markdown); the word is case-insensitive; text after the
 * command (or after a story id) is ignored.
 */
export function parseCommand(body: string): Command | null {
  const lines = sanitizeIssueText(body).split('\n');
  const at = lines.findIndex((l) => l.trim() !== '');
  const line = at === -1 ? undefined : lines[at];
  if (line === undefined) return null;
  const match = /^ {0,3}\/([A-Za-z][\w-]*)(?:[ \t]+(.*))?$/.exec(line.trimEnd());
  if (match === null) return null;
  const word = (match[1] ?? '').toLowerCase();
  const arg = (match[2] ?? '').trim().split(/\s+/)[0] ?? '';
  switch (word) {
    case 'resume':
      return arg.toLowerCase() === 'deferred' ? { kind: 'resume', deferred: true } : { kind: word };
    case 'approve':
    case 'cancel':
    case 'status':
    case 'help':
    case 'revise':
    case 'retro':
      return { kind: word };
    case 'plan': {
      // The guidance may go on over the next lines.
      const guidance = [match[2] ?? '', ...lines.slice(at + 1)].join('\n').trim();
      return guidance === '' ? { kind: 'plan' } : { kind: 'plan', guidance };
    }
    case 'refine': {
      const feedback = [match[2] ?? '', ...lines.slice(at + 1)].join('\n').trim();
      return feedback === '' ? { kind: 'refine' } : { kind: 'refine', feedback };
    }
    case 'retry':
    case 'skip': {
      // People often write ids as code: `/retry \`api\``.
      const story = arg.replace(/^`+|`+$/g, '').toLowerCase();
      return story === '' ? { kind: word } : { kind: word, story };
    }
    default:
      return { kind: 'unknown', word: word.slice(0, WORD_MAX) };
  }
}

/** The command list as markdown, for `/help`, unknown commands and the status comment. */
export function helpText(): string {
  const lines = Object.values(COMMANDS).map(({ usage, does }) => `- \`${usage}\` — ${does}`);
  return [
    'Commands (a comment whose first line is the command, from someone with write permission):',
    ...lines,
  ].join('\n');
}

type CommandCheck = { readonly ok: true } | { readonly ok: false; readonly error: string };

/**
 * Checks a command against the plan: a story named by `/retry` or `/skip`
 * must exist. Whether the story is in a state the command applies to is
 * decided by `reconcile`, which sees the records.
 */
export function validateCommand(command: Command, plan: Plan): CommandCheck {
  if (command.kind === 'unknown') {
    return { ok: false, error: `Unknown command ${code(`/${command.word}`)}.\n\n${helpText()}` };
  }
  if (command.kind !== 'retry' && command.kind !== 'skip') return { ok: true };
  const usage = COMMANDS[command.kind].usage;
  if (command.story === undefined) {
    return { ok: false, error: `\`/${command.kind}\` needs a story id: \`${usage}\`.` };
  }
  if (plan.stories.some((s) => s.id === command.story)) return { ok: true };
  return {
    ok: false,
    error: `\`/${command.kind} ${bare(command.story)}\`: the plan has no story ${code(command.story)}. ${storyList(plan)}`,
  };
}

const LISTED_IDS = 30;

/** People's text inside one of our code spans: no backtick or whitespace can end it. */
function bare(text: string): string {
  return text.replace(/[`\s]+/g, '');
}

function storyList(plan: Plan): string {
  const ids = plan.stories.map((s) => s.id);
  if (ids.length === 0) return 'The plan has no stories.';
  const shown = ids.slice(0, LISTED_IDS).map(code).join(', ');
  const more = ids.length > LISTED_IDS ? `, … and ${ids.length - LISTED_IDS} more` : '';
  return `Stories: ${shown}${more}.`;
}
