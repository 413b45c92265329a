/**
 * The tool calls an agent CLI announces in its event stream, one line at a time, as
 * text that is equal for equal calls (the tool and its input, never its result): what
 * the stall guard compares. A line that is not an event, or not a call, gives none.
 */
import type { Stall } from '../executor.js';
import type { CliHarnessName } from './index.js';

/** The same call this many times in a row stops the turn as stalled. */
export const STALL_REPEATS = 5;

type Json = Record<string, unknown>;

function event(line: string): Json | undefined {
  const text = line.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Json)
      : undefined;
  } catch {
    return undefined;
  }
}

function object(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Json)
    : undefined;
}

/** One tool call: the tool's name and its input. */
interface Call {
  readonly tool: string;
  readonly input: unknown;
}

const call = (tool: unknown, input: unknown): Call => ({
  tool: typeof tool === 'string' ? tool : '?',
  input: input ?? null,
});

/** What a codex item did, without its id, status or result. */
const CODEX_RESULT_KEYS = new Set([
  'id',
  'status',
  'aggregated_output',
  'exit_code',
  'output',
  'result',
  'error',
]);
/** codex items that are not calls. */
const CODEX_NOT_CALLS = new Set(['agent_message', 'reasoning', 'error', 'todo_list']);

function codexCalls(e: Json): Call[] {
  // Each call is announced when it starts (a file change only when it completes).
  const item = object(e['item']);
  if (item === undefined || typeof item['type'] !== 'string') return [];
  if (CODEX_NOT_CALLS.has(item['type'])) return [];
  const started = e['type'] === 'item.started';
  const completedOnly = e['type'] === 'item.completed' && item['type'] === 'file_change';
  if (!started && !completedOnly) return [];
  const input = Object.fromEntries(
    Object.entries(item).filter(([k]) => k !== 'type' && !CODEX_RESULT_KEYS.has(k)),
  );
  return [call(item['type'], input)];
}

function claudeCalls(e: Json): Call[] {
  if (e['type'] !== 'assistant') return [];
  const content = object(e['message'])?.['content'];
  if (!Array.isArray(content)) return [];
  return content
    .map(object)
    .filter((part): part is Json => part !== undefined && part['type'] === 'tool_use')
    .map((part) => call(part['name'], part['input']));
}

function geminiCalls(e: Json): Call[] {
  return e['type'] === 'tool_use' ? [call(e['tool_name'], e['parameters'])] : [];
}

function opencodeCalls(e: Json): Call[] {
  if (e['type'] !== 'tool_use') return [];
  const part = object(e['part']);
  return part === undefined ? [] : [call(part['tool'], object(part['state'])?.['input'])];
}

const CALLS: Readonly<Record<CliHarnessName, ((e: Json) => Call[]) | undefined>> = {
  codex: codexCalls,
  claude: claudeCalls,
  gemini: geminiCalls,
  opencode: opencodeCalls,
  // aider prints prose, not events.
  aider: undefined,
};

function callsOf(harness: CliHarnessName, line: string): Call[] {
  const of = CALLS[harness];
  if (of === undefined) return [];
  const e = event(line);
  return e === undefined ? [] : of(e);
}

const signature = (c: Call): string => `${c.tool} ${JSON.stringify(c.input)}`;

/** The tool calls one line of a CLI's output announces, each as `<tool> <input as JSON>`. */
export function toolCallsOf(harness: CliHarnessName, line: string): string[] {
  return callsOf(harness, line).map(signature);
}

/** Both at once, the line read once: its calls (as `toolCallsOf`) and its shell commands. */
export function lineCalls(
  harness: CliHarnessName,
  line: string,
): { readonly calls: string[]; readonly commands: string[] } {
  const calls = callsOf(harness, line);
  return { calls: calls.map(signature), commands: calls.flatMap(commandOf) };
}

/** Whether a CLI's event stream shows its tool calls at all (aider's prose does not). */
export function showsToolCalls(harness: CliHarnessName): boolean {
  return CALLS[harness] !== undefined;
}

/** The shell command a call runs, if it runs one. */
function commandOf(c: Call): string[] {
  const input = object(c.input);
  const command = input?.['command'] ?? input?.['cmd'];
  if (typeof command === 'string') return [command];
  return Array.isArray(command) && command.every((p) => typeof p === 'string')
    ? [command.join(' ')]
    : [];
}

/** The shell commands one line announces (codex, Claude Code's Bash, Gemini's and opencode's shell tools). */
export function commandsOf(harness: CliHarnessName, line: string): string[] {
  return callsOf(harness, line).flatMap(commandOf);
}

/** Counts the same call in a row; says when it reached `limit`. */
export class RepeatWatch {
  private last: string | undefined;
  private count = 0;

  constructor(private readonly limit = STALL_REPEATS) {}

  /** The stall once `call` was made `limit` times in a row, else undefined. */
  see(call: string): Stall | undefined {
    this.count = call === this.last ? this.count + 1 : 1;
    this.last = call;
    if (this.count < this.limit) return undefined;
    const shown = call.length > 200 ? `${call.slice(0, 200)}…` : call;
    return {
      signal: 'repeat',
      detail: `the same tool call ${this.count} times in a row: ${shown}`,
    };
  }
}
