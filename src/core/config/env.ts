/**
 * Executor environments. The config holds literal values and `${VAR}`
 * references; references are resolved only when an executor runs, so secrets
 * never live in the config object, in state or in reports.
 */
import { EpicflowError } from '../errors.js';

export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A `${NAME}` reference inside an env value. */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Prefixes of well-known credentials (OpenAI/Anthropic, GitHub, Slack, AWS,
 * Google), at the start of the value or of a word in it ("Bearer sk-…").
 */
const RAW_SECRET = /(?:^|\s)(?:sk-|gh[pousr]_|github_pat_|xox[abpors]-|A[KS]IA[0-9A-Z]{4}|AIza)/;

/** The agent never sees a GitHub token (docs/security.md): these names are refused. */
const GITHUB_TOKEN_NAME =
  /^(?:(?:GITHUB|GH)_\w*(?:TOKEN|PAT|SECRET|KEY|PASSWORD)\w*|ACTIONS_\w*TOKEN\w*)$/i;

export function isGithubTokenName(name: string): boolean {
  return GITHUB_TOKEN_NAME.test(name);
}

function looksLikeRawSecret(value: string): boolean {
  return RAW_SECRET.test(value);
}

/** Names of the variables an env value refers to, in order of appearance. */
export function referencedVariables(value: string): string[] {
  return [...value.matchAll(REFERENCE)].map((m) => m[1] ?? '');
}

/**
 * Why an env value is not allowed, or undefined when it is. The reason is
 * phrased for `<field>: <reason>` and never repeats a raw secret.
 */
export function envValueProblem(name: string, value: string): string | undefined {
  if (looksLikeRawSecret(value)) {
    return `expected a reference like "\${${name}}", got what looks like a raw secret (never write secrets in the config)`;
  }
  // Any `$` left after removing the references is a malformed or brace-less reference.
  const rest = value.replace(REFERENCE, '');
  const stray = /\$\{[^}]*\}?|\$[A-Za-z_]\w*/.exec(rest);
  if (stray !== null) {
    return `expected references written as \${NAME}, got ${JSON.stringify(stray[0])}`;
  }
  const github = referencedVariables(value).find(isGithubTokenName);
  if (github !== undefined) {
    return `not allowed to refer to \${${github}}: executors never see a GitHub token`;
  }
  return undefined;
}

/**
 * Replaces every `${VAR}` in `env` from `source`. An unset or empty variable is
 * an error (GitHub Actions turns an undefined secret into an empty string), and
 * all of them are reported at once. `where` names the executor, e.g.
 * `executor "codex"`.
 */
export function resolveEnv(
  env: Readonly<Record<string, string>>,
  source: Readonly<Record<string, string | undefined>>,
  where: string,
): Record<string, string> {
  const resolved: Record<string, string> = {};
  const missing: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    resolved[name] = value.replace(REFERENCE, (_ref, variable: string) => {
      const found = source[variable];
      if (found === undefined || found === '') {
        missing.push(`env.${name}: \${${variable}} is not set`);
        return '';
      }
      return found;
    });
  }
  if (missing.length > 0) {
    throw new EpicflowError('config', `missing environment variables for ${where}`, {
      details: missing,
    });
  }
  return resolved;
}

/**
 * The secret values an env brings in through `${VAR}` references, longest
 * first so that maskers replace a longer secret before any shorter one inside
 * it. Literal values are not secrets (the schema refuses raw secrets).
 */
export function collectSecrets(
  env: Readonly<Record<string, string>>,
  source: Readonly<Record<string, string | undefined>>,
): string[] {
  const secrets = new Set<string>();
  for (const value of Object.values(env)) {
    for (const variable of referencedVariables(value)) {
      const found = source[variable];
      if (found !== undefined && found !== '') secrets.add(found);
    }
  }
  return [...secrets].sort((a, b) => b.length - a.length);
}
