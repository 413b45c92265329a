/** A real @octokit/rest client pointed at a double, with Octokit's request log silenced. */
import { Octokit } from '@octokit/rest';

const silent = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

export function octokitFor(gh: { readonly url: string }, token: string): Octokit {
  return new Octokit({ baseUrl: gh.url, auth: token, log: silent });
}
