/**
 * A reviewer's turn: one lens over a story's change, answered as JSON
 * (`reviewAnswerSchema`). Story text and lens instructions are data from a plan
 * and a config; the diff is the branch's own.
 */
import { z } from 'zod';
import { JUDGE_DIFF_MAX_BYTES } from '../judge/prompts.js';
import type { Story } from '../model.js';
import { bullets, capBytes, oneLine, quote } from '../prompt/clean.js';
import { houseRulesSection } from '../prompt/coder-prompt.js';
import type { ReviewLens } from './lenses.js';

export const reviewAnswerSchema = z.object({
  /** 0 (serious problems), 1 (some), 2 (nothing to fix) through this lens. */
  score: z.number().int().min(0).max(2),
  cleared: z.boolean(),
  findings: z.array(z.string()),
});

interface ReviewPromptInput {
  readonly epic: string;
  readonly story: Story;
  readonly lens: ReviewLens;
  /** `git diff <epic base> <checked commit>`. */
  readonly diff: string;
  readonly houseRules?: string | undefined;
  /** The review round, 1 first. */
  readonly round: number;
  /** What this lens found in the round before, which the change since should close. */
  readonly previous?: readonly string[] | undefined;
  readonly repairError?: string | undefined;
}

export function buildReviewPrompt(input: ReviewPromptInput): string {
  const { story, lens } = input;
  const parts = [
    `# Review story ${story.id} through the ${lens.name} lens (round ${input.round})`,
    `You review ONE story of the epic "${input.epic}". The working directory holds its branch. ` +
      'Read and run what you need, but change no file: your findings are your only output. ' +
      'A judge gives the final verdict later; you look only through your lens.',
    `## Your lens: ${lens.name}`,
    quote(lens.instruction),
    '## The story (as written in the plan)',
    quote(story.description),
  ];
  if (story.acceptance.length > 0) {
    parts.push('## Acceptance criteria', bullets(story.acceptance.map(oneLine)));
  }
  parts.push('## Its owned paths', bullets(story.owns.map((p) => `\`${p}\``)));
  parts.push(...houseRulesSection(input.houseRules));
  if (input.previous !== undefined && input.previous.length > 0) {
    parts.push(
      '## What this lens found in the round before',
      'The coder was asked to close these; check whether the change now does:',
      bullets(input.previous.map(oneLine)),
    );
  }
  parts.push(
    '## The change (diff against the epic branch)',
    '```diff',
    capBytes(input.diff, JUDGE_DIFF_MAX_BYTES).replace(/```/g, "'''"),
    '```',
    '## Answer',
    'Score the change 0 (serious problems), 1 (some) or 2 (nothing to fix) through your lens. ' +
      'Clear it only when you found nothing the coder must fix. Each finding names the file ' +
      'and what to change. End your reply with exactly one JSON object in a ```json fenced block:',
    '```json\n{"score": 1, "cleared": false, "findings": ["src/a.ts: the empty list throws; return an empty total"]}\n```',
  );
  if (input.repairError !== undefined) {
    parts.push(
      '## Your previous answer could not be read',
      `${oneLine(input.repairError)}. Answer again with the JSON object exactly as described.`,
    );
  }
  return `${parts.join('\n\n')}\n`;
}
