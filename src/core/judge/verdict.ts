/**
 * Structured answers of judge and verifier turns: JSON found in the agent's
 * final message (the last fenced json block, else the last JSON object) and
 * validated by a zod schema. A turn that answers anything else gets one repair
 * re-ask quoting the problem.
 */
import { z } from 'zod';

/** The judge's rubric (docs/executors.md): each dimension scored 0–2. */
export const JUDGE_DIMENSIONS = ['provides', 'scope', 'style', 'tests'] as const;
export type JudgeDimension = (typeof JUDGE_DIMENSIONS)[number];

const score = z.number().int().min(0).max(2);

export const judgeVerdictSchema = z.object({
  scores: z.object({ provides: score, scope: score, style: score, tests: score }),
  cleared: z.boolean(),
  findings: z.array(z.string()),
});
export type JudgeVerdict = z.infer<typeof judgeVerdictSchema>;

export const verifierAnswerSchema = z.object({ real: z.boolean(), reason: z.string() });
export type VerifierAnswer = z.infer<typeof verifierAnswerSchema>;

export type Extracted<T> = { ok: true; value: T } | { ok: false; error: string };

/** Candidate JSON texts, most likely first: fenced json blocks, then bare objects, last first. */
function candidates(text: string): string[] {
  const fenced = [...text.matchAll(/```(?:json)?[ \t]*\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  return [...fenced.reverse(), ...objects(text).reverse()];
}

/** Every balanced top-level `{…}` span (string-aware), in order. */
function objects(text: string): string[] {
  const found: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"' && depth > 0) inString = true;
    else if (c === '{') {
      if (depth === 0) start = i;
      depth += 1;
    } else if (c === '}' && depth > 0) {
      depth -= 1;
      if (depth === 0) found.push(text.slice(start, i + 1));
    }
  }
  return found;
}

/**
 * The answer in a final message: the last candidate that parses as JSON and
 * fits the schema. When none fits, the error names what was wrong with the last
 * JSON found (or that there was none), for the repair re-ask.
 */
export function extractAnswer<T>(text: string, schema: z.ZodType<T>): Extracted<T> {
  let firstError: string | undefined;
  for (const candidate of candidates(text)) {
    let json: unknown;
    try {
      json = JSON.parse(candidate);
    } catch (e) {
      firstError ??= `not valid JSON: ${(e as Error).message}`;
      continue;
    }
    const parsed = schema.safeParse(json);
    if (parsed.success) return { ok: true, value: parsed.data };
    firstError ??= parsed.error.issues
      .map((i) => `${i.path.length > 0 ? i.path.join('.') : 'the object'}: ${i.message}`)
      .join('; ');
  }
  return { ok: false, error: firstError ?? 'no JSON object found in the final message' };
}

/**
 * What must change: the judge's findings, or (a verdict that did not clear but
 * named nothing) one line per dimension below 2, so the coder always gets a reason.
 */
export function verdictFindings(verdict: JudgeVerdict): string[] {
  const given = verdict.findings.map((f) => f.trim()).filter((f) => f !== '');
  if (given.length > 0 || verdict.cleared) return given;
  const low = JUDGE_DIMENSIONS.filter((d) => verdict.scores[d] < 2).map(
    (d) => `${d} scored ${verdict.scores[d]}/2`,
  );
  return low.length > 0 ? low : ['the judge did not clear the story and named no finding'];
}

/** `provides 2/2, scope 1/2, style 2/2, tests 2/2` for notes and events. */
export function formatScores(verdict: JudgeVerdict): string {
  return JUDGE_DIMENSIONS.map((d) => `${d} ${verdict.scores[d]}/2`).join(', ');
}
