/**
 * The Action's inputs (action.yml), read into one validated record. The runner
 * passes every input as `INPUT_<NAME>` (hyphens kept) and an unset input as an
 * empty string, so empty means absent here. Ids are checked against the same
 * pattern the dispatcher enforces: nothing but ids ever travels through inputs.
 */
import { z } from 'zod';
import { EpicflowError } from '../core/errors.js';

const ID = /^[A-Za-z0-9._-]{1,100}$/;

const id = (what: string) =>
  z.string().regex(ID, `${what} must be an id: 1 to 100 letters, digits, ".", "_" or "-"`);

const StoryInputs = z.object({
  mode: z.literal('story'),
  epic: id('epic').regex(/^[1-9][0-9]*$/, 'epic must be an issue number'),
  story: id('story'),
  attempt: z
    .string()
    .regex(/^[1-9][0-9]{0,5}$/, 'attempt must be a whole number of at least 1')
    .transform(Number),
  githubToken: z.string().min(1, 'github-token is required'),
  config: z.string().min(1),
  botLogin: z.string().min(1),
});

const OrchestrateInputs = z.object({
  mode: z.literal('orchestrate'),
  githubToken: z.string().min(1, 'github-token is required'),
  config: z.string().min(1),
  botLogin: z.string().min(1),
});

const Inputs = z.discriminatedUnion('mode', [StoryInputs, OrchestrateInputs], {
  error: () => 'mode must be "story" or "orchestrate"',
});

export type StoryInputs = z.infer<typeof StoryInputs>;
export type OrchestrateInputs = z.infer<typeof OrchestrateInputs>;
export type ActionInputs = z.infer<typeof Inputs>;

/** Input names as action.yml spells them, by record key. */
const NAMES = {
  mode: 'mode',
  epic: 'epic',
  story: 'story',
  attempt: 'attempt',
  githubToken: 'github-token',
  config: 'config',
  botLogin: 'bot-login',
} as const;

const DEFAULTS: Partial<Record<keyof typeof NAMES, string>> = {
  config: '.github/epicflow.yml',
  botLogin: 'github-actions[bot]',
};

/** What `core.getInput` reads: `INPUT_` + the name upper-cased, spaces as `_`. */
export function inputVariable(name: string): string {
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
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.map((issue) => {
    const key = issue.path[0];
    const name = typeof key === 'string' && key in NAMES ? NAMES[key as keyof typeof NAMES] : key;
    if (name === undefined) return issue.message;
    const missing = raw[String(key)] === undefined;
    return missing && name !== 'mode'
      ? `input "${String(name)}" is required in ${String(raw['mode'])} mode`
      : `input "${String(name)}": ${issue.message}`;
  });
  throw new EpicflowError('usage', 'invalid inputs of the epicflow action', { details });
}
