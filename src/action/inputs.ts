/**
 * The Action's inputs (action.yml), read into one validated record. The runner
 * passes every input as `INPUT_<NAME>` (hyphens kept) and an unset input as an
 * empty string, so empty means absent here. Ids are checked against the same
 * pattern the dispatcher enforces: nothing but ids ever travels through inputs.
 * GitHub access is given one way: a token, or the App's id and private key
 * (the action then mints installation tokens itself, fresh for long stories).
 */
import { z } from 'zod';
import { jobRef, type JobRef } from '../core/epic/job-ref.js';
import { EpicflowError } from '../core/errors.js';

const ID = /^[A-Za-z0-9._-]{1,100}$/;

const id = (what: string) =>
  z.string().regex(ID, `${what} must be an id: 1 to 100 letters, digits, ".", "_" or "-"`);

/** The App's numeric id, or its client id (`Iv1.…`, `Iv23…`): GitHub accepts either. */
const APP_ID = /^(?:[1-9][0-9]{0,15}|Iv[A-Za-z0-9.]{1,60})$/;

const access = {
  githubToken: z.string().optional(),
  appId: z
    .string()
    .regex(APP_ID, "app-id must be the App's numeric id or its client id (Iv…)")
    .optional(),
  appPrivateKey: z.string().optional(),
};

const USER = /^[a-z_][a-z0-9_-]{0,30}$/;

const StoryFields = z.object({
  mode: z.literal('story'),
  agentUser: z
    .string()
    .regex(USER, 'agent-user must be a user name: lower-case letters, digits, "_" or "-"')
    .optional(),
  allowUnisolatedAgent: z.enum(['true', 'false'], {
    error: () => 'allow-unisolated-agent must be "true" or "false"',
  }),
  sandbox: z.enum(['true', 'false'], { error: () => 'sandbox must be "true" or "false"' }),
  epic: id('epic').regex(/^[1-9][0-9]*$/, 'epic must be an issue number'),
  story: id('story'),
  attempt: z
    .string()
    .regex(/^[1-9][0-9]{0,5}$/, 'attempt must be a whole number of at least 1')
    .transform(Number),
  /**
   * Which of a job's two jobs this is: `work` (the agent, gates and merge, with a token
   * that can only read; hands its result over as an artifact) or `publish` (holds the write
   * credential, reads the result as objects, merges and records). Unset: the one-job
   * workflow of earlier versions, which a story, a planning and a retro attempt refuse.
   */
  phase: z
    .enum(['work', 'publish'], { error: () => 'phase must be "work" or "publish"' })
    .optional(),
  /** The result folder: written by the work job, read by the publish job. */
  result: z.string().min(1).optional(),
  /** How the work job ended (`needs.work.result`), for the publish job's reasons. */
  workOutcome: z.string().min(1).optional(),
  ...access,
  config: z.string().min(1),
  botLogin: z.string().min(1).optional(),
});

/** A planning job: the story workflow dispatched with the reserved story `_plan` runs it. */
const PlanFields = z.object({
  mode: z.literal('plan'),
  agentUser: StoryFields.shape.agentUser,
  allowUnisolatedAgent: StoryFields.shape.allowUnisolatedAgent,
  sandbox: StoryFields.shape.sandbox,
  epic: StoryFields.shape.epic,
  attempt: StoryFields.shape.attempt,
  phase: StoryFields.shape.phase,
  result: StoryFields.shape.result,
  workOutcome: StoryFields.shape.workOutcome,
  ...access,
  config: z.string().min(1),
  botLogin: z.string().min(1).optional(),
});

const OrchestrateFields = z.object({
  mode: z.literal('orchestrate'),
  ...access,
  config: z.string().min(1),
  botLogin: z.string().min(1).optional(),
});

const Inputs = z.discriminatedUnion('mode', [StoryFields, PlanFields, OrchestrateFields], {
  error: () => 'mode must be "story", "plan" or "orchestrate"',
});

/** How the action reaches GitHub. */
export type GitHubAuth =
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'app'; readonly appId: string; readonly privateKey: string };

type WithAuth<T> = Omit<T, keyof typeof access> & { readonly auth: GitHubAuth };

export type StoryInputs = WithAuth<z.infer<typeof StoryFields>>;
export type PlanInputs = WithAuth<z.infer<typeof PlanFields>>;
export type OrchestrateInputs = WithAuth<z.infer<typeof OrchestrateFields>>;
/** A retro job: the story workflow dispatched with the reserved story `_retro` runs it. */
export type RetroInputs = Omit<PlanInputs, 'mode'> & { readonly mode: 'retro' };
type ActionInputs = StoryInputs | PlanInputs | RetroInputs | OrchestrateInputs;

/**
 * The job a story, plan or retro mode runs: a story's attempt, a landing
 * (`story: land-<n>`), a planning attempt (`story: _plan`, or plan mode given directly)
 * or a retro attempt (`story: _retro`).
 */
export function jobOf(
  inputs:
    | Pick<StoryInputs, 'mode' | 'epic' | 'story' | 'attempt'>
    | Pick<PlanInputs, 'mode' | 'epic' | 'attempt'>
    | Pick<RetroInputs, 'mode' | 'epic' | 'attempt'>,
): JobRef {
  const epic = Number(inputs.epic);
  if (inputs.mode === 'plan') return { kind: 'plan', epic, attempt: inputs.attempt };
  if (inputs.mode === 'retro') return { kind: 'retro', epic, attempt: inputs.attempt };
  return jobRef({ epic, story: inputs.story, attempt: inputs.attempt });
}

/** Input names as action.yml spells them, by record key. */
const NAMES = {
  mode: 'mode',
  epic: 'epic',
  story: 'story',
  attempt: 'attempt',
  githubToken: 'github-token',
  appId: 'app-id',
  appPrivateKey: 'app-private-key',
  config: 'config',
  botLogin: 'bot-login',
  agentUser: 'agent-user',
  allowUnisolatedAgent: 'allow-unisolated-agent',
  sandbox: 'sandbox',
  phase: 'phase',
  result: 'result',
  workOutcome: 'work-outcome',
} as const;

const DEFAULTS: Partial<Record<keyof typeof NAMES, string>> = {
  config: '.github/epicflow.yml',
  allowUnisolatedAgent: 'false',
  sandbox: 'true',
};

/** Exactly one way to GitHub: the problems when not, as messages naming the inputs. */
function authOf(fields: {
  githubToken?: string | undefined;
  appId?: string | undefined;
  appPrivateKey?: string | undefined;
}): GitHubAuth | string[] {
  const { githubToken: token, appId, appPrivateKey: key } = fields;
  if (token !== undefined && (appId !== undefined || key !== undefined)) {
    return ['give either input "github-token" or inputs "app-id" and "app-private-key", not both'];
  }
  if (token !== undefined) return { kind: 'token', token };
  if (appId !== undefined && key !== undefined) return { kind: 'app', appId, privateKey: key };
  if (appId !== undefined) return ['input "app-private-key" is required with "app-id"'];
  if (key !== undefined) return ['input "app-id" is required with "app-private-key"'];
  return [
    'give input "github-token" (an App installation token or GITHUB_TOKEN), or inputs "app-id" and "app-private-key" (the action then creates installation tokens itself)',
  ];
}

/** What `core.getInput` reads: `INPUT_` + the name upper-cased, spaces as `_`. */
function inputVariable(name: string): string {
  return `INPUT_${name.replace(/ /g, '_').toUpperCase()}`;
}

/** Reads and validates the inputs from an environment; bad input throws a 'usage' error naming each input. */
export function readInputs(env: NodeJS.ProcessEnv): ActionInputs {
  const raw: Record<string, string> = {};
  for (const [key, name] of Object.entries(NAMES) as [keyof typeof NAMES, string][]) {
    const value = (env[inputVariable(name)] ?? '').trim();
    const fallback = DEFAULTS[key];
    if (value !== '') raw[key] = value;
    else if (fallback !== undefined) raw[key] = fallback;
  }
  const parsed = Inputs.safeParse(raw);
  const auth = authOf(raw);
  if (parsed.success && !Array.isArray(auth)) {
    const { githubToken: _t, appId: _i, appPrivateKey: _k, ...rest } = parsed.data;
    // The story workflow runs planning jobs too: dispatched with the reserved story id.
    if (rest.mode === 'story' && jobOf(rest).kind === 'plan') {
      const { story: _s, ...plan } = rest;
      return { ...plan, mode: 'plan', auth };
    }
    if (rest.mode === 'story' && jobOf(rest).kind === 'retro') {
      const { story: _s, ...retro } = rest;
      return { ...retro, mode: 'retro', auth };
    }
    return { ...rest, auth };
  }
  const details = (parsed.success ? [] : parsed.error.issues).map((issue) => {
    const key = issue.path[0];
    const name = typeof key === 'string' && key in NAMES ? NAMES[key as keyof typeof NAMES] : key;
    if (name === undefined) return issue.message;
    const missing = raw[String(key)] === undefined;
    return missing && name !== 'mode'
      ? `input "${String(name)}" is required in ${String(raw['mode'])} mode`
      : `input "${String(name)}": ${issue.message}`;
  });
  // Which way to GitHub is only worth saying once the mode is known.
  if (
    Array.isArray(auth) &&
    (raw['mode'] === 'story' || raw['mode'] === 'plan' || raw['mode'] === 'orchestrate')
  ) {
    details.push(...auth);
  }
  throw new EpicflowError('usage', 'invalid inputs of the epicflow action', { details });
}
