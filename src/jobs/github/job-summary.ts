/**
 * The job summaries (docs/setup-actions.md): a story job's (story, outcome, gates,
 * perimeter, judge, usage and handover chain) and a refused job's, as markdown for the
 * step summary, which the job shell writes (action/shell.ts) kept well under GitHub's
 * 1 MiB per step and with every secret replaced (`redact`).
 */
import { usageTotals } from '../../core/epic/rules.js';
import { formatChain, type Story, type StoryRecord } from '../../core/model.js';
import type { GateLog } from './story-logs.js';
import type { PushRefusal } from './story-publish.js';

/** What a story's job summary shows, from its work job or its publish job. */
export interface StorySummaryFacts {
  readonly record: StoryRecord;
  readonly story: Story;
  readonly gates: readonly GateLog[];
  readonly events: readonly { readonly at: string; readonly message: string }[];
  /** Pushes of the epic head (the publish job); absent in the work job, which pushes nothing. */
  readonly pushes?: number;
  /** Why GitHub refused the push of the merged epic head, when it did. */
  readonly refusedPush?: PushRefusal | undefined;
}

/** GitHub keeps at most 1 MiB per step summary; stay far below it. */
const SUMMARY_BUDGET = 512 * 1024;
const OUTPUT_TAIL = 4000;
const MAX_EVENTS = 200;

interface StoryTotals {
  readonly tokens: number;
  readonly costUsd: number;
  readonly estimated: boolean;
  /** False when no usage entry carried a cost (no CLI cost, model not in the price table). */
  readonly priced: boolean;
}

export function storyTotals(record: StoryRecord): StoryTotals {
  const { usd, tokens, estimated, priced } = usageTotals([record]);
  return { tokens, costUsd: usd, estimated, priced };
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

function fence(text: string): string {
  const tail = text.length > OUTPUT_TAIL ? `…\n${text.slice(-OUTPUT_TAIL)}` : text;
  return ['```text', tail.replace(/```/g, "'''"), '```'].join('\n');
}

/** The last run of each gate in each tree: what decided the outcome. */
function finalGates(gates: readonly GateLog[]): GateLog[] {
  const last = new Map<string, GateLog>();
  for (const g of gates) last.set(`${g.where}\u0000${g.command}`, g);
  // The story branch first, then the merged tree: the order they decide in.
  return [...last.values()].sort((a, b) =>
    a.where === b.where ? 0 : a.where === 'story' ? -1 : 1,
  );
}

export function failedGates(gates: readonly GateLog[]): GateLog[] {
  return finalGates(gates).filter((g) => !g.ok);
}

/** The engine's note when git's own configuration was put back (`describeGitConfigRestore`). */
const GIT_CONFIG_RESTORE = /^restored .+: git's configuration was changed during /;

/**
 * What the perimeter check found, then whatever epicflow put back of git's own
 * configuration (a filter, a hook path, a proxy the agent or a gate set).
 */
function perimeterVerdict(record: StoryRecord): string {
  const restored = record.notes.filter((n) => n.startsWith('restored outside its perimeter'));
  const gitConfig = record.notes.filter((n) => GIT_CONFIG_RESTORE.test(n));
  const verdict =
    record.reason?.startsWith('refused:') === true
      ? `refused — ${record.reason.slice(8).trim()}`
      : restored.length > 0
        ? restored.join('; ')
        : record.status === 'done'
          ? 'clean: only owned paths changed'
          : 'not reached';
  if (verdict === 'not reached' && gitConfig.length > 0) return gitConfig.join('; ');
  return [verdict, ...gitConfig].join('; ');
}

function judgeVerdict(
  record: StoryRecord,
  events: StorySummaryFacts['events'],
  judged: boolean,
): string {
  if (!judged) return 'no judge configured';
  const said = [...events].reverse().find((e) => /judge/i.test(e.message));
  const note = record.notes.find((n) => /judge/i.test(n));
  return note ?? said?.message ?? 'not reached';
}

export function renderStorySummary(input: {
  readonly epic: number;
  readonly result: StorySummaryFacts;
  /** Which job of the story's run this is: the work job hands over, the publish job merges. */
  readonly phase: 'work' | 'publish';
  readonly judged: boolean;
  readonly repoUrl: string;
  /**
   * How untrusted code ran (`Untrusted.description`), and whether it was kept from this
   * job's credentials: by another uid (`isolated`) or by the kernel's walls (`walled`).
   */
  readonly isolation: {
    readonly isolated: boolean;
    readonly walled?: boolean;
    readonly description: string;
  };
  /** What to do about why the story failed, when epicflow knows (see `storyHint`). */
  readonly hint?: string | undefined;
  /** The story's logs were kept (the `logs` output) for the workflow to upload. */
  readonly logsKept?: boolean | undefined;
}): string {
  const { result } = input;
  const { record, story } = result;
  const totals = storyTotals(record);
  const icon = record.status === 'done' ? '✅' : record.status === 'failed' ? '❌' : '⏸️';
  const job = input.phase === 'work' ? ' — work' : ' — publish';
  const lines: string[] = [
    `## ${icon} epicflow: story \`${story.id}\` of epic #${input.epic}${job}`,
    '',
    `**${cell(story.title)}**`,
    '',
    '| | |',
    '|---|---|',
    `| status | ${record.status} |`,
    `| attempt | ${record.attempt} |`,
    `| branch | [\`${record.branch}\`](${input.repoUrl}/tree/${record.branch}) |`,
    `| merge commit | ${record.mergeCommit === undefined ? '—' : `[\`${record.mergeCommit.slice(0, 12)}\`](${input.repoUrl}/commit/${record.mergeCommit})`} |`,
    `| executor chain | ${record.executors.length === 0 ? '—' : cell(formatChain(record.executors))} |`,
    input.phase === 'work'
      ? '| merge | the publish job of this run checks the result again, merges and records it |'
      : `| pushes of the epic head | ${result.pushes === undefined || result.pushes === 0 ? '—' : String(result.pushes)} |`,
    `| perimeter | ${cell(perimeterVerdict(record))} |`,
    `| judge | ${cell(judgeVerdict(record, result.events, input.judged))} |`,
  ];
  if (record.deferred !== undefined && record.deferred.length > 0) {
    lines.push(`| deferred | ${cell(record.deferred.join('; '))} |`);
  }
  lines.push(
    `| untrusted code | ${cell(input.isolation.isolated || input.isolation.walled === true ? `ran ${input.isolation.description}` : `⚠️ ran ${input.isolation.description}: it could read this job's credentials (allow-unisolated-agent)`)} |`,
  );
  if (record.reason !== undefined) lines.push(`| reason | ${cell(record.reason)} |`);
  if (input.logsKept === true) {
    lines.push(
      `| logs | setup, gates and each agent turn, whole, in this run's artifact \`epicflow-logs-${input.epic}-${story.id}-${record.attempt}\` |`,
    );
  }
  if (input.hint !== undefined) lines.push('', input.hint);
  lines.push('', '### Gates', '');
  const gates = finalGates(result.gates);
  if (gates.length === 0) lines.push('No gate ran.');
  else {
    lines.push('| command | where | result |', '|---|---|---|');
    for (const g of gates) {
      const where = g.where === 'story' ? 'story branch' : 'merged epic tree';
      lines.push(
        `| \`${cell(g.command)}\` | ${where} | ${g.ok ? 'passed' : g.timedOut ? 'timed out' : 'failed'} |`,
      );
    }
    for (const g of gates.filter((x) => !x.ok && x.output !== '')) {
      lines.push(
        '',
        `<details><summary>${escapeHtml(g.command)} output</summary>`,
        '',
        fence(g.output),
        '',
        '</details>',
      );
    }
  }
  lines.push('', '### Usage', '');
  if (record.usage.length === 0) lines.push('No usage reported.');
  else {
    lines.push(
      '| executor | model | input | cached | output | cost | figures |',
      '|---|---|---|---|---|---|---|',
    );
    for (const u of record.usage) {
      lines.push(
        `| ${cell(u.executor)} | ${cell(u.model)} | ${u.tokens.input} | ${u.tokens.cachedInput} | ${u.tokens.output} | ${u.costUsd === undefined || u.costUsd === null ? '—' : `$${u.costUsd.toFixed(4)}`} | ${u.measured ? 'measured' : 'estimated'} |`,
      );
    }
    lines.push(
      '',
      `Total: ${totals.tokens} tokens, ${totals.priced ? `$${totals.costUsd.toFixed(4)}` : 'cost unknown (no price for the model)'}${totals.estimated ? ' (includes estimated figures)' : ''}.`,
    );
  }
  const events = result.events.slice(-MAX_EVENTS);
  lines.push(
    '',
    '<details><summary>Story log</summary>',
    '',
    fence(events.map((e) => `${e.at.slice(11, 19)} ${e.message}`).join('\n')),
    '',
    '</details>',
    '',
  );
  return lines.join('\n');
}

/**
 * What to do about a story that failed for a reason a person must fix, chosen from
 * what the job knows as data (the git adapter's verdict on the push), never from
 * the wording of a message.
 */
export function storyHint(result: Pick<StorySummaryFacts, 'refusedPush'>): string | undefined {
  return result.refusedPush === 'protected'
    ? 'Allow the epicflow App as a bypass actor in the ruleset protecting epic branches, or leave `epic/*` unprotected.'
    : undefined;
}

/** The summary of a job that refused to run, or failed before the story could. */
export function renderFailureSummary(input: {
  readonly title: string;
  readonly message: string;
}): string {
  return [`## ❌ epicflow: ${input.title}`, '', fence(input.message), ''].join('\n');
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Replaces every secret value, then trims to the budget. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('***');
  if (Buffer.byteLength(out) <= SUMMARY_BUDGET) return out;
  return `${Buffer.from(out).subarray(0, SUMMARY_BUDGET).toString('utf8')}\n\n…(summary shortened)\n`;
}
