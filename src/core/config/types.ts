/**
 * The validated configuration (docs/config.md), after defaults. The zod schema in
 * `schema.ts` produces exactly this shape. `${VAR}` references in executor `env`
 * stay unresolved here: they are resolved only when an executor runs.
 */
export type Harness = 'codex' | 'claude' | 'gemini' | 'opencode' | 'aider' | 'command';
export type Role = 'coder' | 'judge' | 'verifier' | 'planner' | 'reviewer';

export const HARNESSES: readonly Harness[] = [
  'codex',
  'claude',
  'gemini',
  'opencode',
  'aider',
  'command',
];

export interface ExecutorConfig {
  readonly id: string;
  readonly harness: Harness;
  /** Model name passed to the CLI; also the price-table key. */
  readonly model?: string;
  /** For `harness: command`: the argv to run. */
  readonly command?: readonly string[];
  /** Extra CLI arguments appended to the harness's own. */
  readonly args: readonly string[];
  /** Stories it may code at once (default 1). */
  readonly slots: number;
  /** Lower is picked first (default 100). */
  readonly priority: number;
  /** Default ['coder']. */
  readonly roles: readonly Role[];
  /** Environment for the executor; values may hold `${VAR}` references, unresolved here. */
  readonly env: Readonly<Record<string, string>>;
  /** Left out of every run (`disabled: true`); such entries never reach the engine. */
  readonly disabled?: boolean;
  /** An http(s) URL answering 2xx while the executor's service is up: ends an outage early. */
  readonly health?: string;
}

/** One package of the repository (`packages/api`) and its own checks. */
export interface PackageConfig {
  /** Its folder, relative to the repository's root. */
  readonly path: string;
  /** Run in the package's folder, after the root's `setup`. */
  readonly setup?: string;
  /** Run in the package's folder, after the root's gates. */
  readonly gates: readonly string[];
}

export interface ModelPrice {
  /** US dollars per million tokens. */
  readonly input: number;
  readonly cachedInput: number;
  readonly cacheWrite: number;
  readonly output: number;
}

export interface EpicflowConfig {
  readonly executors: readonly ExecutorConfig[];
  /** Run in each story worktree before the coder. */
  readonly setup?: string;
  readonly gates: readonly string[];
  /**
   * Packages inside the repository, each with its own setup and gates run in its folder for
   * the stories whose `owns` touch it. Left out: the packages found in the repository's files.
   */
  readonly packages?: readonly PackageConfig[];
  /** Coder rounds fed with gate failures (default 2). */
  readonly fixRounds: number;
  /** Coder turns after a merge that turned the epic head red (default 1). */
  readonly mergeRevisions: number;
  /** A failing setup gets one coder turn to repair it, then one more setup run. */
  readonly setupRepair: boolean;
  /** What setup made on a fresh checkout is kept by its lockfiles' hash and reused (default true). */
  readonly setupCache: boolean;
  /** Stories run as a task plan (a story's own `tasks` overrides it). */
  readonly tasks: boolean;
  readonly judge?: {
    readonly executor: string;
    readonly rounds: number;
    /** Only critical findings block; the others are deferred (docs/config.md). */
    readonly deferNonBlocking: boolean;
  };
  /** Review rounds by model reviewers through named lenses, before the judge. */
  readonly review?: ReviewConfig;
  /** Stories in flight (default 4). */
  readonly concurrency: number;
  /** Milliseconds (config accepts `60m`, `20m`, `90s`, `2h`, or a number of seconds). */
  readonly timeouts: {
    readonly storyMs: number;
    readonly gateMs: number;
    /** A turn silent this long is stopped as stalled. */
    readonly silenceMs: number;
  };
  /** Transient faults of a turn, retried per story (`retries.transient`, default 3). */
  readonly retries: RetryConfig;
  readonly budget?: { readonly usd?: number; readonly tokens?: number };
  readonly board?: { readonly project: string };
  readonly labels: { readonly epic: string };
  /** GitHub: labels and assignees a coder may ask for on its story's sub-issue (empty: none). */
  readonly issueTools: IssueToolsConfig;
  readonly allowWorkflowChanges: boolean;
  /** Price overrides keyed by model name, merged over the shipped price table. */
  readonly prices: Readonly<Record<string, ModelPrice>>;
  /** How prose becomes a plan (`epicflow plan draft`, and on GitHub an epic without a plan). */
  readonly planner: PlannerConfig;
  /** What the coder's prompt shows besides the story. */
  readonly prompt: PromptConfig;
}

export interface IssueToolsConfig {
  /** Label names a coder may ask to add or remove (compared without case). */
  readonly labels: readonly string[];
  /** Logins a coder may ask to assign (compared without case, without `@`). */
  readonly assignees: readonly string[];
}

export interface PromptConfig {
  /** "The code you start from": files of the commit a story starts from, in its first turn. */
  readonly startingCode: StartingCodeLimits;
}

export interface StartingCodeLimits {
  /** Characters of file text the section may hold in all (default 40,000); 0 leaves it out. */
  readonly budget: number;
  /** Characters shown of one file (default 8,000); a longer file is cut there. */
  readonly perFile: number;
}

export interface RetryConfig {
  /** Retries per story of a turn that ended on a transient fault (default 3). */
  readonly transient: number;
  /** Milliseconds before the first retry, doubled for each next one (default 2 s). */
  readonly backoffMs: number;
}

export interface PlannerConfig {
  /** At most this many stories in a drafted plan (default 30). */
  readonly maxStories: number;
  /** Rounds in which the planner repairs a refused plan (default 2). */
  readonly repairRounds: number;
  /** GitHub: create the stories as sub-issues instead of a block (default false). */
  readonly subIssues: boolean;
}

export interface ReviewConfig {
  /** The role whose executors review (default `reviewer`). */
  readonly role: 'reviewer' | 'judge';
  /** Coder rounds fed with the reviewers' findings (default 2). */
  readonly rounds: number;
  /** One reviewer turn per lens and round. */
  readonly lenses: readonly { readonly name: string; readonly instruction: string }[];
}
