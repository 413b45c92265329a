/**
 * The configuration schema (docs/config.md): one zod schema gives validation,
 * defaults, the `EpicflowConfig` type and the JSON Schema shipped for editors.
 * Every field carries the phrase its errors use ("expected …") and a
 * description for the JSON Schema and docs/config.md.
 */
import { z } from 'zod';
import YAML from 'yaml';
import { EpicflowError } from '../errors.js';
import { ENV_NAME_PATTERN } from './env.js';
import { crossCheck, isRecord } from './cross-check.js';
import { ReviewSchema } from './review-schema.js';
import {
  duration,
  expecting,
  mapping,
  nonEmptyString,
  nonNegativeInt,
  positiveInt,
  price,
} from './schema-parts.js';
import { inDocumentOrder } from './document-order.js';
import { withUserExecutors } from './user-roster.js';
import { formatIssues, type KnownKeys, type Problem } from './issues.js';
import { MAX_STORIES } from '../plan/types.js';
import { normalisePath, unsafePathReason } from '../paths.js';
import {
  HARNESSES,
  type EpicflowConfig,
  type ExecutorConfig,
  type ModelPrice,
  type PlannerConfig,
  type ReviewConfig,
  type StartingCodeLimits,
} from './types.js';

export { resolveEnv, collectSecrets } from './env.js';

const ROLES = ['coder', 'judge', 'verifier', 'planner', 'reviewer'] as const;

const HEALTH_WHAT = 'an http(s) URL like http://127.0.0.1:1234/v1/models';

const BOARD_WHAT = 'a GitHub Projects URL like https://github.com/orgs/acme/projects/7';

/** One executor entry (also what a user-level roster file lists). */
export const ExecutorSchema = mapping(
  {
    id: z
      .string(expecting('a kebab-case id like "codex"'))
      .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, expecting('a kebab-case id like "codex"'))
      .describe('Unique name of this executor, in kebab-case (e.g. `codex`, `claude-opus`).'),
    harness: z
      .enum(HARNESSES as [ExecutorConfig['harness'], ...ExecutorConfig['harness'][]], {
        error: `expected one of ${HARNESSES.join(', ')}`,
      })
      .describe('The agent CLI to run: codex, claude, gemini, opencode, aider, or command.'),
    model: nonEmptyString('a model name')
      .exactOptional()
      .describe('Model passed to the CLI; also the key of the price table.'),
    command: z
      .array(
        nonEmptyString('a non-empty argument'),
        expecting('an argv list like ["my-agent", "--flag"]'),
      )
      .min(1, expecting('a non-empty argv list like ["my-agent", "--flag"]'))
      .exactOptional()
      .describe('For harness `command` only (and required there): the program and its arguments.'),
    args: z
      .array(z.string(expecting('a string')), expecting('a list of arguments'))
      .default([])
      .describe("Extra arguments appended to the harness's own command line."),
    slots: positiveInt().default(1).describe('How many stories this executor may code at once.'),
    priority: z
      .int(expecting('an integer'))
      .default(100)
      .describe('Lower is picked first when several executors are free.'),
    roles: z
      .array(
        z.enum(ROLES, { error: `expected one of ${ROLES.join(', ')}` }),
        expecting(`a list of roles (${ROLES.join(', ')})`),
      )
      .min(1, expecting(`at least one role (${ROLES.join(', ')})`))
      .default(['coder'])
      .describe(
        'What this executor may do: coder, judge, verifier, planner (drafts plans from prose), reviewer (reads stories through the lenses of `review`).',
      ),
    env: z
      .record(
        z
          .string()
          .regex(ENV_NAME_PATTERN, expecting('an environment variable name like OPENAI_API_KEY')),
        z.string(expecting('a string (quote numbers and booleans)')),
        expecting('a mapping of environment variable names to values'),
      )
      .default({})
      .describe(
        'Environment for the executor. Secrets only as `${VAR}` references, resolved when the executor runs; never a GitHub token.',
      ),
    disabled: z
      .boolean(expecting('true or false'))
      .exactOptional()
      .describe(
        'Leave this executor out of every run (a user-level entry of the same id included) without deleting its entry.',
      ),
    health: z
      .string(expecting(HEALTH_WHAT))
      .regex(/^https?:\/\/[^\s/?#]+[^\s]*$/i, expecting(HEALTH_WHAT))
      .exactOptional()
      .describe(
        "A URL that answers 2xx while the executor's service is up. After an outage the executor returns as soon as a GET of it does (checked every 15 seconds), instead of after 5 minutes.",
      ),
  },
  'an executor mapping with id and harness',
);

const PACKAGE_PATH_WHAT = 'a folder of the repository like packages/api';

/** One package: its folder and its own checks. */
const Package = mapping(
  {
    path: nonEmptyString(PACKAGE_PATH_WHAT)
      .refine((p) => {
        const path = normalisePath(p);
        return path !== '.' && path !== '' && unsafePathReason(path) === undefined;
      }, expecting(PACKAGE_PATH_WHAT))
      .describe("The package's folder, relative to the repository's root."),
    setup: nonEmptyString('a shell command')
      .exactOptional()
      .describe("Run in the package's folder after the root's setup (e.g. `uv sync`)."),
    gates: z
      .array(nonEmptyString('a shell command'), expecting('a list of shell commands'))
      .default([])
      .describe("Run in the package's folder after the root's gates (e.g. `npm test`)."),
  },
  'a package mapping with path and gates',
);

const ConfigObject = mapping(
  {
    executors: z
      .array(ExecutorSchema, expecting('a list of executors'))
      .default([])
      .describe('The roster: the coding agents available to an epic.'),
    setup: nonEmptyString('a shell command')
      .exactOptional()
      .describe(
        "Shell command run in each story worktree before the coder (e.g. `npm ci`). Files it writes or changes (a lockfile `npm install` creates) stay out of the story's commits unless the coder changes them.",
      ),
    gates: z
      .array(nonEmptyString('a shell command'), expecting('a list of shell commands'))
      .default([])
      .describe(
        "The repository's own checks, run after each coder turn and after each merge, one after another: they stop at the first that fails with failures of its own (one red only as it was on the base does not stop them), and the rest run on the next check. Each command keeps its own log. The coder is told not to run the whole suite itself, at most the test file that covers its change. Left out: the checks found in the repository's files (see Detection), with their setup unless `setup` is set; `[]`: none, stories are judged by the perimeter alone.",
      ),
    packages: z
      .array(Package, expecting('a list of packages'))
      .exactOptional()
      .describe(
        "Packages inside the repository (a workspace member, `apps/web`, a Go module in `services/api`), each with its own setup and gates, run in its folder: a story runs the root's checks and those of the packages its `owns` touch; the merged tree runs those of every package the epic's stories touch. Left out: the packages found in the repository's files (see Detection); `[]`: none.",
      ),
    fixRounds: nonNegativeInt()
      .default(2)
      .describe(
        'Coder rounds fed with new gate failures before the story fails. A story still red after them gets a split proposed when a planner is configured ([planning.md](planning.md#a-story-too-big-is-split)).',
      ),
    setupRepair: z
      .boolean(expecting('true or false'))
      .default(false)
      .describe(
        "A story whose setup fails gets one coder turn with setup's output to repair it (within its perimeter), then setup runs once more before the story fails.",
      ),
    setupCache: z
      .boolean(expecting('true or false'))
      .default(true)
      .describe(
        "Setup on a fresh checkout of a commit (a story's tree at its start, its checks, the baseline, the merged tree) is run once per lockfile content: the files it made outside the commit are kept under epicflow's own folder, keyed by a hash of the setup commands and the repository's lockfiles read from the commit, and copied into the next fresh checkout with the same key instead of running setup again. Never filled from a tree an agent worked in; a failed setup is never kept. Without a lockfile the key holds the manifests (`package.json`, `pyproject.toml`, …) and the epic: one epic's checks install once and agree on versions, the next epic resolves again. `false`: setup runs every time (turn it off when setup also builds the sources: the key does not cover them).",
      ),
    tasks: z
      .boolean(expecting('true or false'))
      .default(false)
      .describe(
        "Each story's coder first answers a list of small tasks (each with an observable outcome, covering every acceptance line), then runs each as its own turn with the gates after it; a resumed story continues at its first unchecked task. A story's own `tasks` overrides this.",
      ),
    mergeRevisions: nonNegativeInt()
      .default(1)
      .describe(
        "Coder turns a story gets, on its branch caught up with the epic head, when its merge turned the epic head's gates red (the merge is undone), or its gates turned red when it took the epic head before the judge, before it fails.",
      ),
    judge: mapping(
      {
        executor: z
          .string(expecting('the id of an executor with role judge'))
          .describe('Id of a roster executor that has the judge role.'),
        rounds: nonNegativeInt().default(2).describe("Coder rounds fed with the judge's findings."),
        deferNonBlocking: z
          .boolean(expecting('true or false'))
          .default(false)
          .describe(
            'Only critical findings block a story: the judge gives each finding a severity, and major and minor ones are listed under the story as Deferred (the report offers one follow-up round over them once the epic is finished).',
          ),
      },
      'a mapping with executor and rounds',
    )
      .exactOptional()
      .describe("Optional LLM judge scoring each story's diff against its acceptance criteria."),
    review: ReviewSchema,
    concurrency: positiveInt()
      .default(4)
      .describe('Stories in flight at once (also capped by free coder slots).'),
    timeouts: mapping(
      {
        story: duration()
          .prefault('60m')
          .describe(
            'Wall-clock limit of one coder turn: seconds, or text like `90s`, `20m`, `2h`, `1h30m`. A story whose turn runs out of time gets a split proposed when a planner is configured ([planning.md](planning.md#a-story-too-big-is-split)).',
          ),
        gate: duration()
          .prefault('20m')
          .describe(
            'Wall-clock limit of one gate command: seconds, or text like `90s`, `20m`, `2h`.',
          ),
        silence: duration()
          .prefault('15m')
          .describe(
            'An agent turn that prints nothing for this long is stopped as stalled and counts as a failed round (the same tool call 5 times in a row does too): seconds, or text like `90s`, `15m`.',
          ),
      },
      'a mapping with story, gate and silence',
    )
      .transform(({ story, gate, silence }) => ({
        storyMs: story,
        gateMs: gate,
        silenceMs: silence,
      }))
      .prefault({})
      .describe('Wall-clock limits; on expiry the whole process group is killed.'),
    retries: mapping(
      {
        transient: nonNegativeInt()
          .default(3)
          .describe(
            'Retries per story of a coder, judge or verifier turn that ended on a transient fault (an outage or 5xx of the model, a crash of the CLI, a network timeout), before the story fails or the roster excludes the executor.',
          ),
        backoff: duration()
          .prefault('2s')
          .describe(
            'Wait before the first retry, doubled for each next one (at most 2 minutes): seconds, or text like `2s`, `1m`.',
          ),
      },
      'a mapping with transient and backoff',
    )
      .transform(({ transient, backoff }) => ({ transient, backoffMs: backoff }))
      .prefault({})
      .describe('How a story recovers from transient faults without a person.'),
    budget: mapping(
      {
        usd: z
          .number(expecting('a positive number of US dollars'))
          .positive(expecting('a positive number of US dollars'))
          .exactOptional()
          .describe('Halt new stories once this many US dollars are spent.'),
        tokens: positiveInt()
          .exactOptional()
          .describe('Halt new stories once this many tokens are used.'),
      },
      'a mapping with usd and/or tokens',
    )
      .exactOptional()
      .describe('Optional spending limit: passing it halts the epic (running stories finish).'),
    board: mapping(
      {
        project: z
          .string(expecting(BOARD_WHAT))
          .regex(
            /^https:\/\/[^/\s]+\/(?:orgs|users)\/[^/\s]+\/projects\/[1-9]\d*(?:\/views\/\d+)?\/?$/,
            expecting(BOARD_WHAT),
          )
          .describe(
            'URL of a GitHub Projects board, e.g. `https://github.com/orgs/acme/projects/7`.',
          ),
      },
      'a mapping with project',
    )
      .exactOptional()
      .describe('Optional GitHub Projects board that follows every story.'),
    labels: mapping(
      {
        epic: nonEmptyString('a label name')
          .default('epic')
          .describe('The label that turns an issue into an epic.'),
      },
      'a mapping with epic',
    )
      .prefault({})
      .describe('Label names.'),
    issueTools: mapping(
      {
        labels: z
          .array(nonEmptyString('a label name'), expecting('a list of label names'))
          .default([])
          .describe(
            "Labels a story's coder may ask to add to or remove from the story's own sub-issue.",
          ),
        assignees: z
          .array(nonEmptyString('a GitHub login'), expecting('a list of GitHub logins'))
          .default([])
          .describe("Logins a story's coder may ask to assign to the story's own sub-issue."),
      },
      'a mapping with labels and assignees',
    )
      .prefault({})
      .describe(
        "GitHub: what a story's coder may ask for on its sub-issue (empty lists: nothing; the publish job applies it).",
      ),
    allowWorkflowChanges: z
      .boolean(expecting('true or false'))
      .default(false)
      .describe(
        'Let stories change files under `.github/` (workflows, composite actions, scripts) and the epicflow config (refused by default).',
      ),
    prices: z
      .record(
        nonEmptyString('a model name'),
        mapping(
          {
            input: price().describe('Input tokens, US dollars per million.'),
            cachedInput: price().describe('Cached input tokens, US dollars per million.'),
            cacheWrite: price().describe('Cache-write tokens, US dollars per million.'),
            output: price().describe('Output tokens, US dollars per million.'),
          },
          'a mapping with input, cachedInput, cacheWrite and output',
        ),
        expecting('a mapping of model names to prices'),
      )
      .default({})
      .describe('Price overrides by model name, merged over the shipped price table.'),
    planner: mapping(
      {
        maxStories: z
          .int(expecting(`an integer from 1 to ${MAX_STORIES}`))
          .min(1, expecting(`an integer from 1 to ${MAX_STORIES}`))
          .max(MAX_STORIES, expecting(`an integer from 1 to ${MAX_STORIES}`))
          .default(30)
          .describe(
            `At most this many stories in a drafted plan (${MAX_STORIES} at most, GitHub's sub-issue limit).`,
          ),
        repairRounds: nonNegativeInt()
          .default(2)
          .describe('Rounds in which the planner repairs a plan that was refused.'),
        subIssues: z
          .boolean(expecting('true or false'))
          .default(false)
          .describe('GitHub: create the stories as sub-issues instead of a block.'),
      },
      'a mapping with maxStories, repairRounds and subIssues',
    )
      .prefault({})
      .describe('How an epic written in prose becomes a plan (an executor with role planner).'),
    prompt: mapping(
      {
        startingCode: mapping(
          {
            budget: nonNegativeInt()
              .default(40_000)
              .describe(
                "Characters of file text the section holds at most (the story's `reads` at most half); 0 leaves the section out.",
              ),
            perFile: positiveInt()
              .default(8_000)
              .describe('Characters shown of one file; a longer file is cut there.'),
          },
          'a mapping with budget and perFile',
        )
          .prefault({})
          .describe(
            '"The code you start from" in a story\'s first coder turn: its `reads`, its dependencies\' files and its own files as they are at the commit it starts from.',
          ),
      },
      'a mapping with startingCode',
    )
      .prefault({})
      .describe("What the coder's prompt shows besides the story."),
  },
  'a mapping of settings',
);

export const EpicflowConfigSchema = ConfigObject.superRefine(crossCheck, { when: () => true });

// Type-level check: the schema produces exactly the lead's `EpicflowConfig`.
type DeepReadonly<T> = T extends readonly (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;
type SameKeys<A, B> = [Exclude<keyof A, keyof B> | Exclude<keyof B, keyof A>] extends [never]
  ? true
  : false;
type Mutual<A, B> = [A] extends [B] ? ([B] extends [DeepReadonly<A>] ? true : false) : false;
type Output = z.output<typeof EpicflowConfigSchema>;
type OutputExecutor = Output['executors'][number];
const schemaMatchesTypes: [
  Mutual<Output, EpicflowConfig>,
  SameKeys<Output, EpicflowConfig>,
  Mutual<OutputExecutor, ExecutorConfig>,
  SameKeys<OutputExecutor, ExecutorConfig>,
  SameKeys<NonNullable<Output['budget']>, NonNullable<EpicflowConfig['budget']>>,
  SameKeys<NonNullable<Output['judge']>, NonNullable<EpicflowConfig['judge']>>,
  SameKeys<NonNullable<Output['board']>, NonNullable<EpicflowConfig['board']>>,
  SameKeys<Output['timeouts'], EpicflowConfig['timeouts']>,
  SameKeys<Output['retries'], EpicflowConfig['retries']>,
  SameKeys<Output['labels'], EpicflowConfig['labels']>,
  SameKeys<Output['prices'][string], ModelPrice>,
  SameKeys<Output['planner'], PlannerConfig>,
  SameKeys<NonNullable<Output['review']>, ReviewConfig>,
  SameKeys<Output['prompt']['startingCode'], StartingCodeLimits>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true];
void schemaMatchesTypes;

/** Every default applied to an empty file. */
export const DEFAULT_CONFIG: EpicflowConfig = EpicflowConfigSchema.parse({});

/**
 * Validates a parsed config value. Every problem is reported at once, one
 * line each, under the file name; `order` may sort them (by source position).
 */
export function validateConfig(
  value: unknown,
  file: string,
  order: (problems: Problem[]) => Problem[] = (problems) => problems,
): EpicflowConfig {
  const knownKeys: KnownKeys = new WeakMap();
  const result = EpicflowConfigSchema.safeParse(value ?? {}, {
    reportInput: true,
    error: (issue) => {
      // Remember the keys an object accepts, to suggest one for a misspelt key.
      if (
        issue.code === 'unrecognized_keys' &&
        issue.inst instanceof z.ZodObject &&
        isRecord(issue.input)
      ) {
        knownKeys.set(issue.input, Object.keys(issue.inst.shape));
      }
      return undefined;
    },
  });
  if (result.success) {
    // A disabled entry is only ever a way of leaving an executor out: no run sees it.
    const executors = result.data.executors.filter((e) => e.disabled !== true);
    return executors.length === result.data.executors.length
      ? result.data
      : { ...result.data, executors };
  }
  throw new EpicflowError('config', `invalid config in ${file}`, {
    details: order(formatIssues(result.error.issues, knownKeys)).map((p) => p.line),
  });
}

/**
 * Parses YAML config text; an empty file means every default. `userExecutors` (a
 * user-level roster, already checked on its own) are added under the file's own: an
 * entry of the file replaces the user's entry with the same id as a whole.
 */
export function parseConfig(
  text: string,
  file: string,
  userExecutors: readonly Record<string, unknown>[] = [],
): EpicflowConfig {
  const document = YAML.parseDocument(text);
  if (document.errors.length > 0) {
    throw new EpicflowError('config', `invalid config in ${file}`, {
      details: document.errors.map((error) => {
        const first = error.message.split('\n')[0] ?? error.message;
        const position = error.linePos?.[0];
        const what = first.replace(/ at line \d+, column \d+:?$/, '');
        return position === undefined
          ? what
          : `line ${position.line}, column ${position.col}: ${what}`;
      }),
    });
  }
  const value: unknown = document.toJS();
  return validateConfig(withUserExecutors(value, userExecutors), file, (problems) =>
    inDocumentOrder(problems, document),
  );
}

/** Whether a config text (valid: `parseConfig` took it) has no `key:` at its top. */
export function leavesOut(text: string, key: 'gates' | 'packages'): boolean {
  const value: unknown = YAML.parse(text);
  return typeof value !== 'object' || value === null || !(key in value);
}
