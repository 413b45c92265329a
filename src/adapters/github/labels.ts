/** Repository labels: an idempotent ensure (read, create when missing, a race counts as there). */
import { githubError, statusOf } from './errors.js';
import type { GitHubClient } from './repo.js';

interface LabelSpec {
  readonly owner: string;
  readonly repo: string;
  readonly name: string;
  /** Six hex digits, without `#`. */
  readonly color: string;
  readonly description: string;
}

/** Creates the label unless a label of that name (any case) exists; an existing one is left as it is. */
export async function ensureLabel(
  octokit: GitHubClient,
  spec: LabelSpec,
): Promise<'created' | 'unchanged'> {
  const base = { owner: spec.owner, repo: spec.repo };
  const where = `${spec.owner}/${spec.repo}`;
  try {
    await octokit.rest.issues.getLabel({ ...base, name: spec.name });
    return 'unchanged';
  } catch (e) {
    if (statusOf(e) !== 404) {
      throw githubError(`read the label "${spec.name}" of ${where}`, e, 'Issues: read and write');
    }
  }
  try {
    await octokit.rest.issues.createLabel({
      ...base,
      name: spec.name,
      color: spec.color,
      description: spec.description,
    });
    return 'created';
  } catch (e) {
    // Someone created it between our read and our write: theirs stands.
    if (statusOf(e) === 422) {
      const now = await octokit.rest.issues
        .getLabel({ ...base, name: spec.name })
        .catch(() => null);
      if (now !== null) return 'unchanged';
    }
    throw githubError(`create the label "${spec.name}" in ${where}`, e, 'Issues: read and write');
  }
}
