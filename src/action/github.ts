/**
 * The Action's way to GitHub, built once per run and shared by both modes: the
 * repository port with its Octokit, the token source git uses, the login the
 * credentials act as, and every credential to keep out of logs. With the App's
 * id and key the action mints installation tokens itself and mints them again
 * before they expire, for the API client and for each git network command
 * alike, so a story that runs longer than one token still pushes and records.
 */
import { botCommitIdentity } from '../core/epic/push.js';
import * as core from '@actions/core';
import { appTokens, type TokenSource } from '../adapters/github/app-auth.js';
import { createOctokit, GitHubRepo } from '../adapters/github/index.js';
import { basicCredential, RemoteGit, type RemoteGitOptions } from '../adapters/git/remote-git.js';
import type { GitHubAuth } from './inputs.js';
import { childEnvironment, readDefaultBranch, type RunnerContext } from './runner.js';

/** Who `GITHUB_TOKEN` acts as; the default login when a token is given. */
const TOKEN_BOT_LOGIN = 'github-actions[bot]';

interface ActionGitHub {
  readonly repo: GitHubRepo;
  /** A token with time left; ask again for every use. */
  readonly token: TokenSource;
  /**
   * Every credential so far, growing as tokens are minted: what summaries and
   * annotations are redacted with. Other secrets of the run are added to it.
   */
  readonly secrets: string[];
}

/**
 * What of a private key must never show: the whole text and each line of it (a
 * log may print one line). The armor lines (`-----BEGIN …-----`) are no secret.
 */
export function privateKeySecrets(text: string): string[] {
  const lines = text
    .split(/\r?\n|\\n/)
    .map((l) => l.trim())
    .filter((l) => l.length >= 16 && !l.startsWith('-----'));
  return text.trim() === '' ? [] : [text, ...lines];
}

export async function connectGitHub(input: {
  readonly auth: GitHubAuth;
  /** The `bot-login` input; unset means the App's own bot, or github-actions[bot] for a token. */
  readonly botLogin: string | undefined;
  readonly runner: RunnerContext;
}): Promise<ActionGitHub> {
  const { auth, runner } = input;
  const secrets: string[] = [];
  // The header form git sends is masked like the token itself.
  const conceal = (token: string): void => {
    for (const s of [token, basicCredential(token)]) {
      core.setSecret(s);
      secrets.push(s);
    }
  };
  const connect = (
    token: TokenSource,
    octokit: ReturnType<typeof createOctokit>,
    botLogin: string,
  ): ActionGitHub => ({
    repo: new GitHubRepo({ owner: runner.owner, repo: runner.repo, botLogin, octokit }),
    token,
    secrets,
  });

  if (auth.kind === 'token') {
    conceal(auth.token);
    const octokit = createOctokit({
      baseUrl: runner.apiUrl,
      token: auth.token,
      production: runner.throttle,
    });
    return connect(async () => auth.token, octokit, input.botLogin ?? TOKEN_BOT_LOGIN);
  }
  secrets.push(...privateKeySecrets(auth.privateKey));
  const tokens = await appTokens({
    appId: auth.appId,
    privateKey: auth.privateKey,
    owner: runner.owner,
    repo: runner.repo,
    baseUrl: runner.apiUrl,
    production: runner.throttle,
    onToken: conceal,
  });
  const octokit = createOctokit({
    baseUrl: runner.apiUrl,
    tokenSource: tokens.token,
    production: runner.throttle,
  });
  return connect(tokens.token, octokit, input.botLogin ?? tokens.botLogin);
}

/**
 * Git over HTTP for the job checkout, with the connection's credentials: the token
 * source is asked before every network command (each token it hands out is masked
 * as it is minted), so a push after an hour-long agent run goes with a fresh token.
 */
function remoteGit(gh: ActionGitHub, options: Omit<RemoteGitOptions, 'token'>): RemoteGit {
  return new RemoteGit({ ...options, token: gh.token });
}

/**
 * What every job on a checkout starts with (story, plan and land modes): the GitHub
 * connection, git over HTTP for the workspace, the environment children get (no
 * credential; `secrets` grows as tokens are minted and executor secrets are read, and
 * what is written out is redacted with it) and the default branch, from the event
 * payload rather than a read of the repository.
 */
export async function connectJob(
  inputs: { readonly auth: GitHubAuth; readonly botLogin?: string | undefined },
  runner: RunnerContext,
  env: NodeJS.ProcessEnv,
): Promise<{
  readonly gh: ActionGitHub;
  readonly remote: RemoteGit;
  readonly childEnv: NodeJS.ProcessEnv;
  readonly defaultBranch: string | undefined;
}> {
  const gh = await connectGitHub({ auth: inputs.auth, botLogin: inputs.botLogin, runner });
  const remote = remoteGit(gh, {
    cwd: runner.workspace,
    serverUrl: runner.serverUrl,
    repository: `${runner.owner}/${runner.repo}`,
    identity: botCommitIdentity(gh.repo.botLogin),
  });
  const childEnv = childEnvironment(env, gh.secrets);
  const defaultBranch = await readDefaultBranch(runner);
  return { gh, remote, childEnv, defaultBranch };
}
