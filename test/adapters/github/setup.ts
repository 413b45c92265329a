/** A GitHub double with the epicflow App's bot, one repository and a GitHubRepo on it. */
import { createOctokit } from '../../../src/adapters/github/client.js';
import { GitHubRepo } from '../../../src/adapters/github/repo.js';
import {
  startGitHubDouble,
  type GitHubDouble,
  type SeededUser,
} from '../../github-double/index.js';

export const OWNER = 'acme';
export const REPO = 'shop';

export interface World {
  readonly gh: GitHubDouble;
  readonly bot: SeededUser;
  readonly repo: GitHubRepo;
  /** A GitHubRepo for another token (same repository). */
  repoAs(token: string, production?: boolean): GitHubRepo;
}

export async function startWorld(files: Record<string, string> = {}): Promise<World> {
  const gh = await startGitHubDouble();
  const app = gh.seed.app({});
  const bot = gh.seed.user({ login: app.botLogin, type: 'Bot', permission: 'admin' });
  await gh.seed.repo({
    owner: OWNER,
    name: REPO,
    files: {
      'README.md': '# shop\n',
      '.github/workflows/epicflow-story.yml': 'on: workflow_dispatch\njobs: {}\n',
      ...files,
    },
  });
  const repoAs = (token: string, production = false): GitHubRepo =>
    new GitHubRepo({
      owner: OWNER,
      repo: REPO,
      botLogin: app.botLogin,
      octokit: createOctokit({ baseUrl: gh.url, token, production }),
    });
  return { gh, bot, repo: repoAs(bot.token), repoAs };
}
