/**
 * Environment pieces every CLI harness shares: the isolated home, a fixed
 * time zone (so clock times in limit messages are read without guessing), and
 * the executor's own env minus anything that carries a GitHub credential.
 */
import { join } from 'node:path/posix';
import type { Harness } from '../config/types.js';
import type { TurnRequest } from '../executor.js';
import { withoutGithubTokens } from './signals.js';

/** HOME and the XDG folders inside the executor's isolated home. */
function isolatedHome(home: string): Record<string, string> {
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    XDG_CACHE_HOME: join(home, '.cache'),
  };
}

/**
 * The env a CLI gets from its harness: harness defaults, then the executor's
 * configured env (it may override defaults such as a base URL), then the
 * isolation variables, which nothing overrides. GitHub tokens never pass.
 */
export function harnessEnv(
  request: TurnRequest,
  defaults: Record<string, string>,
  isolation: Record<string, string>,
  drop: readonly string[] = [],
): Record<string, string> {
  const env: Record<string, string> = {
    ...defaults,
    ...request.env,
    ...isolatedHome(request.home),
    // Clock times in limit messages ("try again at 9:46 AM") are then in UTC.
    TZ: 'UTC',
    ...isolation,
  };
  for (const name of drop) delete env[name];
  return withoutGithubTokens(env);
}

/** A file name safe in any file system, for per-turn files in a shared home. */
export function turnFileName(request: TurnRequest, suffix: string): string {
  const safe = (s: string): string => s.replace(/[^A-Za-z0-9._-]+/g, '_');
  return `${safe(request.epic)}-${safe(request.story)}-${request.role}-${request.round}${suffix}`;
}

/**
 * What of a tree configures each CLI when it starts there: its project settings, plugins,
 * hooks and MCP servers, and the `.env` files some load into their environment.
 */
const PROJECT_SETTINGS: Readonly<Record<Harness, readonly string[]>> = {
  claude: ['.claude', '.mcp.json'],
  codex: ['.codex'],
  gemini: ['.gemini', '.env'],
  opencode: ['.opencode', 'opencode.json', 'opencode.jsonc'],
  aider: ['.aider.conf.yml', '.aider.model.settings.yml', '.aider.model.metadata.json', '.env'],
  command: [],
};

/**
 * The paths of the tree (relative to it) a turn must not see: for a helper — a judge,
 * verifier, reviewer or planner, which runs with its own key in a tree a coder wrote last —
 * its CLI's project settings, which would run the coder's plugins and hooks inside it or
 * send its key elsewhere; none for a coder, whose tree it is (and which may have to edit
 * them). The kernel sandbox veils them; each CLI is also told to ignore them where it can.
 */
export function veiledFor(harness: Harness, role: TurnRequest['role']): readonly string[] {
  return role === 'coder' ? [] : PROJECT_SETTINGS[harness];
}
