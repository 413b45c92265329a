/**
 * The publish job's side of `issueTools` (docs/security.md, "What an agent may ask of
 * GitHub"): the labels and assignees the story's record asks for on its sub-issue, decided
 * again from the configuration this job read itself (the work job's filtering is not
 * trusted) and applied with idempotent ensures to the story's own sub-issue, never another.
 * What was applied, dropped or skipped goes into the record's notes; a GitHub failure here is
 * noted, never a failure of a story already merged.
 */
import type { GitHubRepo } from '../../adapters/github/index.js';
import type { IssueToolsConfig } from '../../core/config/types.js';
import { describeErrorLine, EpicflowError } from '../../core/errors.js';
import type { StoryRecord } from '../../core/model.js';
import { decideIssueRequests, noIssueRequests } from '../../core/story/index.js';

type IssueToolsRepo = Pick<GitHubRepo, 'ensureIssueLabels' | 'ensureAssignees'>;

/** The record with the story's issue requests applied (or why not) in its notes. */
export async function applyIssueRequests(
  repo: IssueToolsRepo,
  allow: IssueToolsConfig,
  subIssue: number | undefined,
  record: StoryRecord,
  say: (message: string) => void,
): Promise<StoryRecord> {
  const asked = record.issueRequests;
  if (asked === undefined || noIssueRequests(asked)) return record;
  const notes: string[] = [];
  const note = (text: string): void => {
    notes.push(text);
    say(text);
  };
  const { allowed, dropped } = decideIssueRequests(asked, allow);
  for (const d of dropped) note(`publish job: ${d}`);
  if (record.mergeCommit === undefined) {
    note('issue tools: nothing applied, the story was not merged');
  } else if (noIssueRequests(allowed)) {
    // Everything asked was dropped above: nothing to send.
  } else if (subIssue === undefined) {
    note('issue tools: nothing applied, the story has no sub-issue');
  } else {
    try {
      const labels = await repo.ensureIssueLabels(subIssue, {
        add: allowed.addLabels,
        remove: allowed.removeLabels,
      });
      const assigned = await repo.ensureAssignees(subIssue, allowed.assignees);
      const done = [
        ...labels.added.map((l) => `labelled ${l}`),
        ...labels.removed.map((l) => `unlabelled ${l}`),
        ...assigned.assigned.map((a) => `assigned ${a}`),
      ];
      note(
        done.length === 0
          ? `issue tools: #${subIssue} already as asked`
          : `issue tools: #${subIssue} ${done.join(', ')}`,
      );
      for (const login of assigned.refused) {
        note(
          `issue tools: GitHub did not assign ${login} to #${subIssue} (no access to the repository?)`,
        );
      }
    } catch (e) {
      if (!(e instanceof EpicflowError)) throw e;
      note(`issue tools: could not update #${subIssue}: ${describeErrorLine(e)}`);
    }
  }
  return notes.length === 0 ? record : { ...record, notes: [...record.notes, ...notes] };
}
