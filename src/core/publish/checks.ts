/**
 * What the publish side re-derives from a result's objects before merging it, judged here:
 * the perimeter (paths, modes, links, gitlinks, protected paths), the existing-tests guard
 * and the secret scan. Pure: the git adapter reads the objects, this decides.
 */
import { oracleFindings } from '../gates/index.js';
import {
  classifyChanges,
  describeStrays,
  isClean,
  type PerimeterChange,
} from '../perimeter/index.js';
import { ResultRefusal } from './result.js';
import { describeSecrets, scanForSecrets, type ScannedCommit } from './secrets.js';

interface PublishFacts {
  readonly story: {
    readonly id: string;
    readonly owns: readonly string[];
    readonly reads: readonly string[];
    readonly testsChange: boolean;
  };
  /** Who the refusal names (`story <id>` unless given: a landing is `land-<n>`). */
  readonly subject?: string;
  readonly configPaths: readonly string[];
  readonly allowWorkflowChanges: boolean;
  /** What merging the story commit brings, against the epic head (as stored, with modes). */
  readonly changes: readonly PerimeterChange[];
  /** Every symbolic link of the story commit's tree (path → target, from the objects). */
  readonly links: ReadonlyMap<string, string>;
  /** The unified diff of the same changes, every file as text. */
  readonly diff: string;
  /** Every commit the merge brings to the epic branch. */
  readonly commits: readonly ScannedCommit[];
  /** Values of the secrets the publish job holds. */
  readonly secrets: readonly string[];
}

/**
 * The first check the result fails, as a refusal naming every offending path or place;
 * null when it may be merged. A story's strays were put back in the work job, so any
 * path outside its perimeter here is a result that was not made by epicflow's process.
 */
export function publishRefusal(facts: PublishFacts): ResultRefusal | null {
  const { story } = facts;
  const who = facts.subject ?? `story ${story.id}`;
  const perimeter = classifyChanges({
    changes: facts.changes,
    owns: story.owns,
    reads: story.reads,
    configPaths: facts.configPaths,
    allowWorkflowChanges: facts.allowWorkflowChanges,
    links: facts.links,
  });
  if (!isClean(perimeter)) {
    return new ResultRefusal(
      'perimeter',
      `${who} changes paths it may not merge`,
      describeStrays(perimeter),
    );
  }
  const oracle = oracleFindings({
    changes: facts.changes,
    diff: facts.diff,
    // Pass counts are the gates' (work job) business; only the diff is judged here.
    baselinePassed: null,
    currentPassed: null,
    testsChange: story.testsChange,
  });
  if (oracle.length > 0) {
    return new ResultRefusal(
      'existing-tests',
      `${who} changes existing tests without the plan's leave`,
      oracle,
    );
  }
  const secrets = scanForSecrets({ commits: facts.commits, secrets: facts.secrets });
  if (secrets.length > 0) {
    return new ResultRefusal(
      'secret',
      `${who}'s commits hold ${secrets.length === 1 ? 'a credential' : `${secrets.length} credentials`}: not pushed`,
      describeSecrets(secrets),
    );
  }
  return null;
}
