/**
 * A story's findings log (`logs/<story>/findings.md`): every review and judge round of
 * the story, with its findings and scores, rendered whole from the record after each
 * round. Findings are text a model wrote: each is one cleaned line in a list item.
 */
import type { Evaluation } from '../model.js';
import { oneLine } from '../prompt/clean.js';
import { storyLogsDir } from '../story/logs.js';

/** Where a story's findings log is kept, relative to the epic's state folder. */
export function findingsLogName(story: string): string {
  return `${storyLogsDir(story)}/findings.md`;
}

const OUTCOME: Record<Evaluation['outcome'], string> = {
  fixing: 'sent to the coder',
  open: 'left open (no rounds left)',
  passed: 'passed',
  failed: 'the story failed',
};

function heading(e: Evaluation): string {
  const n = e.findings.length;
  const what = e.cleared ? 'cleared' : `${n} finding${n === 1 ? '' : 's'}, ${OUTCOME[e.outcome]}`;
  return `## Attempt ${e.attempt} · ${e.kind} round ${e.round}: ${what}`;
}

export function renderFindingsLog(story: string, evaluations: readonly Evaluation[]): string {
  const parts = [`# Findings of story \`${story}\``];
  for (const e of evaluations) {
    const scores = Object.entries(e.scores)
      .map(([k, v]) => `${k} ${v}/2`)
      .join(', ');
    parts.push(
      heading(e),
      `Commit \`${e.commit.slice(0, 12)}\` · by ${e.executors.join(', ')}` +
        (scores === '' ? '' : ` · ${scores}`),
    );
    if (e.findings.length > 0) parts.push(e.findings.map((f) => `- ${oneLine(f)}`).join('\n'));
  }
  return `${parts.join('\n\n')}\n`;
}
