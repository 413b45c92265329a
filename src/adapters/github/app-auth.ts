/**
 * Installation tokens of a GitHub App for one repository, minted from the App's
 * id and private key and minted again before they expire. A token lives one
 * hour on GitHub, a story's agent may run longer: whoever needs a token (the
 * REST/GraphQL client, git over HTTP) asks the source for one per request and
 * always gets one with time left.
 */
import { createPrivateKey } from 'node:crypto';
import { createAppAuth } from '@octokit/auth-app';
import { EpicflowError } from '../../core/errors.js';
import { createOctokit, type OctokitLog } from './client.js';
import { statusOf } from './errors.js';

/** A token valid now; callers ask again for every request instead of keeping one. */
export type TokenSource = () => Promise<string>;

/** A token is replaced once less than this is left (or half its lifetime, when that is shorter). */
const REFRESH_MARGIN_MS = 10 * 60 * 1000;

interface AppTokenOptions {
  /** The App's numeric id or its client id (`Iv…`): GitHub takes either as the JWT issuer. */
  readonly appId: string;
  /** The App's private key (PEM, PKCS#1 as GitHub downloads it, or PKCS#8). */
  readonly privateKey: string;
  readonly owner: string;
  readonly repo: string;
  /** `https://api.github.com`, a GHES `https://<host>/api/v3`, or a test double. */
  readonly baseUrl: string;
  readonly production: boolean;
  /** Called with every token as soon as it is minted (to mask it in logs). */
  readonly onToken?: (token: string) => void;
  readonly log?: OctokitLog;
  readonly now?: () => number;
}

interface AppTokens {
  readonly token: TokenSource;
  readonly installationId: number;
  /** The login the tokens act as: `<app-slug>[bot]`. */
  readonly botLogin: string;
  /** How many tokens were minted so far. */
  readonly minted: () => number;
}

/**
 * The key as a PKCS#8 PEM, or a usage error naming the input. Secrets pasted into
 * a variable sometimes carry literal `\n` for newlines: those are read as newlines.
 */
function readPrivateKey(text: string, input = 'app-private-key'): string {
  const pem = text.includes('\\n') && !text.includes('\n') ? text.replace(/\\n/g, '\n') : text;
  try {
    return createPrivateKey(pem.trim()).export({ type: 'pkcs8', format: 'pem' }).toString();
  } catch {
    // The key is a secret: the message says what is wrong, never what was given.
    throw new EpicflowError('usage', `input "${input}" is not a private key`, {
      details: [
        "expected the App's private key in PEM form (-----BEGIN RSA PRIVATE KEY----- …), as GitHub downloads it",
      ],
    });
  }
}

function mintError(what: string, appId: string, repository: string, e: unknown): EpicflowError {
  const status = statusOf(e);
  const details =
    status === 401
      ? ['GitHub did not accept the App credentials: check that app-private-key belongs to app-id']
      : status === 404
        ? [`install the App on ${repository} (or give the installation access to it)`]
        : status === 422 || status === 403
          ? [`the App's installation cannot reach ${repository}, or lacks a permission it needs`]
          : [e instanceof Error ? e.message : String(e)];
  return new EpicflowError(
    'github',
    `cannot ${what} for App ${appId} on ${repository}${status === undefined ? '' : ` (HTTP ${status})`}`,
    { details, cause: e },
  );
}

/**
 * Finds the App's installation on the repository and returns a source of
 * installation tokens scoped to that repository alone.
 */
export async function appTokens(options: AppTokenOptions): Promise<AppTokens> {
  const repository = `${options.owner}/${options.repo}`;
  const now = options.now ?? Date.now;
  // JWT-authenticated calls go through a client of their own, without the token hook.
  const plain = createOctokit({
    baseUrl: options.baseUrl,
    production: options.production,
    ...(options.log === undefined ? {} : { log: options.log }),
  });
  const auth = createAppAuth({
    appId: /^[0-9]+$/.test(options.appId) ? Number(options.appId) : options.appId,
    privateKey: readPrivateKey(options.privateKey),
    request: plain.request,
  });

  let installation: { id: number; app_slug: string };
  try {
    const { token: jwt } = await auth({ type: 'app' });
    const { data } = await plain.request('GET /repos/{owner}/{repo}/installation', {
      owner: options.owner,
      repo: options.repo,
      headers: { authorization: `bearer ${jwt}` },
    });
    installation = data;
  } catch (e) {
    throw mintError('find the installation', options.appId, repository, e);
  }

  let current: { token: string; refreshAt: number } | undefined;
  let pending: Promise<string> | undefined;
  let minted = 0;

  const mint = async (): Promise<string> => {
    const asked = now();
    let result: { token: string; expiresAt: string };
    try {
      result = await auth({
        type: 'installation',
        installationId: installation.id,
        repositoryNames: [options.repo],
        // The library keeps tokens for 59 minutes whatever their expiry: we decide.
        refresh: true,
      });
    } catch (e) {
      throw mintError('create an installation token', options.appId, repository, e);
    }
    minted += 1;
    options.onToken?.(result.token);
    const expires = Date.parse(result.expiresAt);
    const lifetime = Number.isFinite(expires) ? expires - asked : 0;
    const margin = Math.min(REFRESH_MARGIN_MS, lifetime / 2);
    current = { token: result.token, refreshAt: asked + lifetime - margin };
    return result.token;
  };

  const token: TokenSource = async () => {
    if (current !== undefined && now() < current.refreshAt) return current.token;
    // Requests running side by side share one new token.
    pending ??= mint().finally(() => {
      pending = undefined;
    });
    return pending;
  };

  return {
    token,
    installationId: installation.id,
    botLogin: `${installation.app_slug}[bot]`,
    minted: () => minted,
  };
}
