/**
 * What "The code you start from" costs in prompt tokens, on a real repository:
 * this one. The tree of HEAD is read through the git adapter (git's objects,
 * never a work tree), a plan of three stories over real paths of different size
 * is parsed from markdown, and each story's first coder prompt is built as a
 * first turn builds it (`readStartingCode`, then `buildCoderPrompt` with the
 * story, the plan, the gates and CONTRIBUTING.md as house rules) at several
 * budgets. Tokens are counted with OpenAI's o200k_base encoding (js-tiktoken),
 * beside the characters ÷ 4 estimate epicflow logs; the section's tokens are
 * priced at one model's list input price from the price table.
 *
 * Deterministic for a given commit: rerun it after the sources change and the
 * numbers follow them.
 */
import { fileURLToPath } from 'node:url';
import { Tiktoken } from 'js-tiktoken/lite';
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import { Git } from '../src/adapters/git/git.js';
import { gitPort } from '../src/adapters/git/port.js';
import { parseConfig, type EpicflowConfig } from '../src/core/config/index.js';
import type { Plan, Story } from '../src/core/model.js';
import { parsePlan } from '../src/core/plan/index.js';
import {
  buildCoderPrompt,
  notShownPaths,
  type StartingCode,
  type StartingGroup,
} from '../src/core/prompt/index.js';
import { findPrice } from '../src/core/usage/index.js';
import type { EpicContext } from '../src/engine/context.js';
import type { GitPort } from '../src/engine/ports.js';
import { readStartingCode } from '../src/engine/story/starting-code.js';

/** The budgets measured: off, half the default, the default, twice the default. */
const BUDGETS = [0, 20_000, 40_000, 80_000] as const;

/** The model whose list input price the section's tokens are priced at. */
const MODEL = 'gpt-5.6';

const EPIC = 'starting-code-bench';

/** The config of the example `.github/epicflow.yml` that matters to a coder prompt. */
const CONFIG_YAML = `gates: [npm test]\n`;

/**
 * Three stories over real paths of this repository: a small one, a middle one,
 * and a large one whose dependency's files show as read-only context.
 */
const PLAN_MARKDOWN = `# Sharper judging

\`\`\`epicflow
stories:
  - id: judge-rubric
    title: Score each acceptance line separately in the judge's verdict
    description: |
      The judge's verdict names the acceptance lines it found unmet, one finding per line,
      so that the coder's next round closes exactly those. Keep the verdict schema
      backward compatible: a verdict without per-line findings still parses.
    owns: [src/core/judge]
    reads: [src/core/model.ts]
    acceptance:
      - a verdict lists each unmet acceptance line as its own finding
      - a verdict of the old shape still parses
  - id: story-engine
    title: Record each turn's duration on the story record
    description: |
      Every coder turn and every gate run records how long it took on the story's record,
      so that the report can show where a story's time went.
    owns: [src/engine/story]
    reads: [src/core/story]
    provides: ["StoryRecord.turns[].durationMs"]
    acceptance:
      - each turn's duration is on the story record after a run
  - id: git-timing
    title: Time each git command the adapter runs
    description: |
      The git adapter measures each command it runs and hands the slowest ones to the
      story's turn timings, without changing what any command does.
    owns: [src/adapters/git]
    reads: [src/engine/ports.ts]
    dependsOn: [story-engine]
    acceptance:
      - the slowest git commands of a story are listed with their durations
\`\`\`
`;

/** Prompt tokens and the characters ÷ 4 estimate epicflow uses where it has no count. */
interface Tokens {
  readonly counted: number;
  readonly estimated: number;
}

function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** How far the estimate is from the count, in per cent of the count (negative: under). */
function estimateError(t: Tokens): number {
  return t.counted === 0 ? 0 : ((t.estimated - t.counted) / t.counted) * 100;
}

/** US dollars for `tokens` input tokens at `perMillion` dollars per million. */
function inputCost(tokens: number, perMillion: number): number {
  return (tokens * perMillion) / 1_000_000;
}

interface Row {
  readonly story: string;
  readonly budget: number;
  readonly prompt: Tokens;
  readonly section: Tokens;
  /** Files shown: the story's reads, its dependencies' files, its own. */
  readonly shown: Readonly<Record<StartingGroup, number>>;
  readonly notShown: number;
  readonly skipped: number;
}

function planOf(markdown: string): Plan {
  const parsed = parsePlan(markdown);
  if (!parsed.ok) {
    throw new Error(
      `the bench plan is invalid: ${parsed.violations.map((v) => v.message).join('; ')}`,
    );
  }
  return parsed.plan;
}

/**
 * The starting code a first turn of `story` reads at `commit`, through the engine's own
 * reader: it uses only the config, the git port and the plan of the epic's context.
 */
function startingCode(
  git: GitPort,
  config: EpicflowConfig,
  plan: Plan,
  story: Story,
  commit: string,
): Promise<StartingCode> {
  const ctx = { config, ports: { git }, settings: { plan } } as unknown as EpicContext;
  return readStartingCode(ctx, story, commit);
}

async function houseRulesAt(git: GitPort, commit: string): Promise<string | undefined> {
  const file = (await git.treeFiles(commit)).find((f) => f.path === 'CONTRIBUTING.md');
  if (file === undefined) return undefined;
  const blob = (await git.readBlobs([file.object])).get(file.object);
  return blob === undefined ? undefined : new TextDecoder().decode(blob);
}

async function measure(): Promise<{ commit: string; rows: Row[] }> {
  const checkout = fileURLToPath(new URL('..', import.meta.url));
  const repo = await Git.open(checkout);
  const commit = await repo.worktree(checkout).head();
  const git = gitPort(repo);
  const plan = planOf(PLAN_MARKDOWN);
  const base = parseConfig(CONFIG_YAML, 'bench config');
  const houseRules = await houseRulesAt(git, commit);
  const encoder = new Tiktoken(o200kBase);
  // Source text is data: a special token's spelling in it counts as ordinary text.
  const count = (text: string): Tokens => ({
    counted: encoder.encode(text, [], []).length,
    estimated: estimateTokens(text),
  });
  const rows: Row[] = [];
  for (const story of plan.stories) {
    let off: Tokens | undefined;
    for (const budget of BUDGETS) {
      const config: EpicflowConfig = {
        ...base,
        prompt: { startingCode: { ...base.prompt.startingCode, budget } },
      };
      const code = await startingCode(git, config, plan, story, commit);
      const prompt = buildCoderPrompt({
        epic: EPIC,
        plan,
        story,
        round: 1,
        gates: config.gates,
        houseRules,
        startingCode: code,
      });
      const tokens = count(prompt);
      off ??= tokens;
      rows.push({
        story: story.id,
        budget,
        prompt: tokens,
        section: {
          counted: tokens.counted - off.counted,
          estimated: tokens.estimated - off.estimated,
        },
        shown: {
          reads: code.shown.filter((f) => f.group === 'reads').length,
          dependencies: code.shown.filter((f) => f.group === 'dependencies').length,
          owns: code.shown.filter((f) => f.group === 'owns').length,
        },
        notShown: notShownPaths(code).length,
        skipped: code.skipped.length,
      });
    }
  }
  return { commit, rows };
}

export async function run(): Promise<void> {
  const price = findPrice(MODEL);
  if (price === undefined) throw new Error(`no price for ${MODEL} in the price table`);
  const { commit, rows } = await measure();
  const n = (x: number): string => x.toLocaleString('en-US');
  const pct = (t: Tokens): string => {
    const e = Math.round(estimateError(t));
    return `${e > 0 ? '+' : ''}${e === 0 ? 0 : e} %`;
  };
  const usd = (tokens: number, perMillion: number): string =>
    `$${inputCost(tokens, perMillion).toFixed(4)}`;
  console.log(
    `repository: this one at ${commit.slice(0, 12)}; tokens: o200k_base; ` +
      `estimate: characters ÷ 4; price: ${MODEL}, $${price.input.toFixed(2)} per million input ` +
      `tokens ($${price.cachedInput.toFixed(2)} cached)`,
  );
  console.log('');
  console.log(
    '| story | budget (chars) | files shown (reads + deps + own) | not shown | skipped | prompt tokens | estimate | section tokens | estimate | estimate off | section cost | cached |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const on = r.budget > 0;
    const { reads, dependencies, owns } = r.shown;
    const shown = reads + dependencies + owns;
    console.log(
      `| ${r.story} | ${on ? n(r.budget) : '0 (off)'} | ${on ? `${shown} (${reads} + ${dependencies} + ${owns})` : '0'} | ${r.notShown} | ${r.skipped} | ` +
        `${n(r.prompt.counted)} | ${n(r.prompt.estimated)} | ` +
        `${on ? n(r.section.counted) : '—'} | ${on ? n(r.section.estimated) : '—'} | ` +
        `${on ? pct(r.section) : pct(r.prompt)} | ` +
        `${on ? usd(r.section.counted, price.input) : '—'} | ` +
        `${on ? usd(r.section.counted, price.cachedInput) : '—'} |`,
    );
  }
}
