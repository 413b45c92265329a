/**
 * Structured answers of judge and verifier turns: JSON found in the agent's
 * final message (the last fenced json block, else the last JSON object) and
 * validated by a zod schema. A turn that answers anything else gets one repair
 * re-ask quoting the problem.
 */
import { z } from 'zod';

/** The judge's rubric (docs/executors.md): each dimension scored 0–2. */
const JUDGE_DIMENSIONS = ['provides', 'scope', 'style', 'tests'] as const;

const score = z.number().int().min(0).max(2);

/** How much a finding weighs: only a critical one blocks a story under `judge.deferNonBlocking`. */
const FINDING_SEVERITIES = ['critical', 'major', 'minor'] as const;
type FindingSeverity = (typeof FINDING_SEVERITIES)[number];

/**
 * One finding: a plain string (what every verdict was before severities, and what a judge
 * asked without them answers) weighs as critical, so an old verdict keeps its meaning.
 */
const finding = z.union([
  z.string(),
  z.object({ severity: z.enum(FINDING_SEVERITIES), text: z.string() }),
]);

export const judgeVerdictSchema = z.object({
  scores: z.object({ provides: score, scope: score, style: score, tests: score }),
  cleared: z.boolean(),
  findings: z.array(finding),
});
export type JudgeVerdict = z.infer<typeof judgeVerdictSchema>;

export const verifierAnswerSchema = z.object({ real: z.boolean(), reason: z.string() });

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
  return weighedFindings(verdict).map(findingText);
}

/** A finding with its weight (a plain string, or a finding epicflow made up, is critical). */
interface WeighedFinding {
  readonly severity: FindingSeverity;
  readonly text: string;
}

/** The findings with their severities, as `verdictFindings` picks them. */
function weighedFindings(verdict: JudgeVerdict): WeighedFinding[] {
  const given = verdict.findings
    .map((f) =>
      typeof f === 'string'
        ? { severity: 'critical' as const, text: f.trim() }
        : { severity: f.severity, text: f.text.trim() },
    )
    .filter((f) => f.text !== '');
  if (given.length > 0 || verdict.cleared) return given;
  const low = JUDGE_DIMENSIONS.filter((d) => verdict.scores[d] < 2).map(
    (d) => `${d} scored ${verdict.scores[d]}/2`,
  );
  const texts = low.length > 0 ? low : ['the judge did not clear the story and named no finding'];
  return texts.map((text) => ({ severity: 'critical', text }));
}

/** A finding as people and the coder read it: `minor: …` and `major: …`; a critical one as it is. */
function findingText(f: WeighedFinding): string {
  return f.severity === 'critical' ? f.text : `${f.severity}: ${f.text}`;
}

/**
 * What a verdict means for the story under `judge.deferNonBlocking` (`defer`): without it,
 * the story passes when the judge cleared it and every finding blocks otherwise. With it,
 * only critical findings block (and a verdict that did not clear but named nothing, whose
 * findings epicflow makes up): the story passes when none is left, and the findings below
 * critical are deferred — listed with the story, for one follow-up round.
 */
export function judgeOutcome(
  verdict: JudgeVerdict,
  defer: boolean,
): { readonly passes: boolean; readonly blocking: string[]; readonly deferred: string[] } {
  const weighed = weighedFindings(verdict);
  if (!defer) {
    return verdict.cleared
      ? { passes: true, blocking: [], deferred: [] }
      : { passes: false, blocking: weighed.map(findingText), deferred: [] };
  }
  const blocking = weighed.filter((f) => f.severity === 'critical').map(findingText);
  const deferred = weighed.filter((f) => f.severity !== 'critical').map(findingText);
  return { passes: blocking.length === 0, blocking, deferred };
}

/** `provides 2/2, scope 1/2, style 2/2, tests 2/2` for notes and events. */
export function formatScores(verdict: JudgeVerdict): string {
  return JUDGE_DIMENSIONS.map((d) => `${d} ${verdict.scores[d]}/2`).join(', ');
}
