/**
 * What follows an epic's pull request (docs/landing.md). Merged: the epic is recorded
 * as landed (no decision starts anything for it again), the final report goes on the
 * epic issue, its sub-issues are closed and its board items marked Done, the story
 * branches are deleted (`epic/<n>` is left to the repository's own setting), and the
 * epic issue is closed. Closed without a merge: the epic is held, nothing is
 * dispatched, and the issue says how to go on. The webhook's word is not taken:
 * the pull request is read from GitHub. Every write is an ensure, so a redelivered
 * event does nothing twice.
 */
import { GitHubStateStore } from '../adapters/github/index.js';
import { Landings, type PullFacts } from '../adapters/github/resources/landing.js';
import type { EpicflowConfig } from '../core/config/index.js';
import type { EpicDoc } from '../core/epic/epic-doc.js';
import { REPORT_MARKER } from '../core/epic/index.js';
import { landedHeadline, prClosedHalt } from '../core/epic/landing.js';
import { withoutMarker } from '../core/epic/markers.js';
import { isEpicflowError } from '../core/errors.js';
import { fullReportUrl } from './full-report.js';
import { EPIC_DOC, updateEpicDoc } from './epic-doc.js';
import { loadConfig } from './load.js';
import { withEpicLock } from './lock.js';
import { commentInvalidConfig } from './problems.js';
import type { SettledDeps } from './settings.js';
import type { EpicEvent, HandleResult } from './types.js';

/** The final report's marker on the epic issue. */
const LANDED_MARKER = 'landed';

const EPIC_HEAD = /^epic\/([1-9][0-9]*)$/;

const ignored = (reason: string): HandleResult => ({ outcome: 'ignored', reason, dispatched: [] });

export async function handlePullRequestClosed(
  deps: SettledDeps,
  event: Extract<EpicEvent, { kind: 'pr-closed' }>,
): Promise<HandleResult> {
  const { repo } = deps;
  const landings = new Landings(repo);
  const pr = await landings.pull(event.number);
  const m = EPIC_HEAD.exec(pr.headRef);
  if (m === null || pr.headRepository !== repo.fullName) return ignored('not an epic pull request');
  if (pr.state !== 'closed') return ignored(`pull request #${pr.number} is open`);
  const defaultBranch = await deps.defaultBranch();
  if (pr.baseRef !== defaultBranch) return ignored('not a pull request into the default branch');
  const epic = Number(m[1]);
  let config: EpicflowConfig;
  try {
    config = await loadConfig(repo);
  } catch (e) {
    if (!isEpicflowError(e, 'config')) throw e;
    await commentInvalidConfig(repo, epic, e);
    return { outcome: 'invalid-config', epic, dispatched: [] };
  }
  const issue = await repo.labelledIssue(epic);
  if (issue.isPullRequest || !issue.labels.includes(config.labels.epic)) {
    return ignored('its head names no epic');
  }
  return withEpicLock(`${repo.fullName}#${epic}`, async () => {
    const store = new GitHubStateStore({ repo, epic: String(epic), defaultBranch });
    const doc = await store.readJson<EpicDoc>(EPIC_DOC);
    if (!pr.merged) {
      await updateEpicDoc(
        store,
        { value: doc?.value ?? {}, sha: doc?.sha ?? null },
        { halt: prClosedHalt(pr.number) },
      );
      const halt = prClosedHalt(pr.number);
      await repo.ensureComment({
        issueNumber: epic,
        marker: LANDED_MARKER,
        body: `**Held**: ${halt.message}; epicflow starts nothing for this epic.\n\n${halt.nextStep ?? ''}`,
      });
      return { outcome: 'reconciled', reason: 'held: pull request closed', epic, dispatched: [] };
    }
    await landed(deps, { epic, pr, doc, store, config, defaultBranch, landings });
    return { outcome: 'reconciled', reason: 'landed', epic, dispatched: [] };
  });
}

async function landed(
  deps: SettledDeps,
  input: {
    epic: number;
    pr: PullFacts;
    doc: { value: EpicDoc; sha: string } | null;
    store: GitHubStateStore;
    config: EpicflowConfig;
    defaultBranch: string;
    landings: Landings;
  },
): Promise<void> {
  const { repo } = deps;
  const { epic, pr, store } = input;
  const mergeCommit = pr.mergeCommit ?? '';
  // First, so that no decision starts, opens or dispatches anything for the epic again.
  if (input.doc?.value.landed === undefined) {
    const at = deps.now().toISOString();
    await store.updateJson<EpicDoc>(EPIC_DOC, (current) => {
      if (current?.landed !== undefined) return current;
      const { halt: _h, ...rest } = current ?? {};
      return { ...rest, landed: { pr: pr.number, mergeCommit, at } };
    });
  }
  // The report as the pull request showed it last, under the line saying it landed.
  const report = await repo.findComment(pr.number, REPORT_MARKER);
  const url = fullReportUrl(repo.htmlUrl, epic);
  await repo.ensureComment({
    issueNumber: epic,
    marker: LANDED_MARKER,
    body: [
      landedHeadline({ pr: pr.number, mergeCommit, into: input.defaultBranch }),
      report === null
        ? `The report: ${url}`
        : withoutMarker(report.body, REPORT_MARKER)
            .replace(/<!--[^>]*-->/g, '')
            .trim(),
    ].join('\n\n'),
  });
  const subs = await repo.listSubIssues(epic);
  for (const s of subs) await repo.closeIssue(s.number, s.state);
  if (input.config.board !== undefined && subs.length > 0) {
    const board = await repo.openBoard(input.config.board.project, {
      contents: subs.map((s) => s.nodeId),
    });
    const items = await board.ensureItems(subs.map((s) => s.nodeId));
    await board.updateMany(
      [...items.values()].map((itemId) => ({ itemId, values: { status: 'done' as const } })),
    );
  }
  for (const branch of await input.landings.branchesUnder(`story/${epic}/`)) {
    await input.landings.deleteBranch(branch);
  }
  await repo.closeIssue(epic);
}
