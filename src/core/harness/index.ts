/**
 * The agent CLI harnesses: per CLI a pure invocation builder and output
 * parser, the binary's default name and how to install it.
 */
import type { Harness } from '../config/types.js';
import { buildAiderInvocation, parseAiderOutput } from './aider.js';
import { buildClaudeInvocation, parseClaudeOutput } from './claude.js';
import { buildCodexInvocation, parseCodexOutput } from './codex.js';
import { buildGeminiInvocation, parseGeminiOutput } from './gemini.js';
import { buildOpencodeInvocation, opencodeGivesUp, parseOpencodeOutput } from './opencode.js';
import type { BuildInvocation, ParseOutput } from './types.js';

export type CliHarnessName = Exclude<Harness, 'command'>;

export interface CliHarness {
  readonly name: CliHarnessName;
  /** The executable's name on PATH. */
  readonly binary: string;
  /** How a person installs it, for the "not installed" detail. */
  readonly install: string;
  readonly build: BuildInvocation;
  readonly parse: ParseOutput;
  /**
   * A line after which the CLI only retries on its own, silently and without end (a quota,
   * an outage): the turn is stopped there and its output read as it stands.
   */
  readonly givesUp?: (line: string) => boolean;
}

export const CLI_HARNESSES: Readonly<Record<CliHarnessName, CliHarness>> = {
  codex: {
    name: 'codex',
    binary: 'codex',
    install: 'npm install -g @openai/codex',
    build: buildCodexInvocation,
    parse: parseCodexOutput,
  },
  claude: {
    name: 'claude',
    binary: 'claude',
    install: 'npm install -g @anthropic-ai/claude-code',
    build: buildClaudeInvocation,
    parse: parseClaudeOutput,
  },
  gemini: {
    name: 'gemini',
    binary: 'gemini',
    install: 'npm install -g @google/gemini-cli',
    build: buildGeminiInvocation,
    parse: parseGeminiOutput,
  },
  opencode: {
    name: 'opencode',
    binary: 'opencode',
    install: 'npm install -g opencode-ai',
    build: buildOpencodeInvocation,
    parse: parseOpencodeOutput,
    givesUp: opencodeGivesUp,
  },
  aider: {
    name: 'aider',
    binary: 'aider',
    install: 'python -m pip install aider-chat',
    build: buildAiderInvocation,
    parse: parseAiderOutput,
  },
};

export function isCliHarness(harness: Harness): harness is CliHarnessName {
  return harness !== 'command';
}

/** The detail of a run whose CLI is missing: names the CLI and how to install it. */
export function notInstalledDetail(harness: CliHarnessName): string {
  const cli = CLI_HARNESSES[harness];
  return `${cli.binary} is not installed: ${cli.install}`;
}

export { veiledFor } from './common.js';
export { runRecordOf } from './record.js';
export type { CliRunRecord } from './record.js';
export type * from './types.js';
