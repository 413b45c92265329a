/**
 * Landing, the engine's part: bring a branch (the default branch, say) into a
 * finished epic branch. The merge is made in a tree of epicflow's own at the
 * epic head; a clean merge is gated on the merged tree against the epic
 * head's baseline (failures the epic head already has are inherited); a
 * conflict or red gates go to a coder for at most three rounds, each checked
 * (no conflict markers left, only the land perimeter changed, gates green).
 * Only then does the epic branch move, by compare-and-swap from the head it
 * started from: never a force. Anything less and nothing moves.
 *
 * Written against the ports, so a GitHub `land-<n>` job can run it on its own
 * checkout, state store and executors (the local entry is `jobs/local/land-local.ts`).
 */
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { buildLandMessage } from '../core/merge-message.js';
import type { ExecutorConfig } from '../core/config/types.js';
import type { RunRecord } from '../core/executor.js';
import { triageGate, type GateRun } from '../core/gates/index.js';
import { conflictMarkerLines, MAX_LAND_ROUNDS } from '../core/land/index.js';
import { nestedLeftOut } from '../core/story/index.js';
import type { UsageEntry } from '../core/model.js';
import { classifyChanges, strayPaths } from '../core/perimeter/index.js';
import { withGitConfigGuarded } from './guarded-config.js';
import { landPerimeter } from '../core/perimeter/land.js';
import {
  buildLandPrompt,
  type GateFailureFeedback,
  type LandConflictFile,
} from '../core/prompt/index.js';
import { priceUsage } from '../core/usage/index.js';
import type { EpicContext } from './context.js';
import type { LandGitPort, LandTreePort, WorktreePort } from './ports.js';
import { MAX_HANDOVERS, RATE_LIMIT_BACKOFF_MS } from './story.js';
import { commitLinks } from './story/checks.js';
import { turnRequest } from './turn-request.js';
import { mergeUsage } from './usage.js';

interface LandRequest {
  /** `land-<n>`: the job's lane, its coder lease and home. */
  readonly job: string;
  /** The branch brought in (named in messages and the `Epicflow-Land` trailer). */
  readonly branch: string;
  /** Its head when the landing started: this commit is merged, or nothing. */
  readonly branchHead: string;
  /** Where the land tree goes: a folder of epicflow's own, removed afterwards. */
  readonly treePath: string;
  /** Coder rounds at most (default 3). */
  readonly maxRounds?: number | undefined;
}

/** What a landing did, whatever its outcome; the record `land.json` keeps. */
export interface LandFacts {
  /** Paths the merge left in conflict. */
  conflicts: string[];
  /** Gates that failed on the merged tree (new against the epic head), last seen. */
  failingGates: string[];
  rounds: number;
  executors: string[];
  usage: UsageEntry[];
  notes: string[];
}

type BringInResult =
  | (LandFacts & {
      readonly ok: true;
      /** The epic head now: the landed merge, or the head it was when nothing was needed. */
      readonly epicHead: string;
      /** False when the epic branch already contained the branch. */
      readonly merged: boolean;
    })
  | (LandFacts & { readonly ok: false; readonly reason: string });

/** A failing check of the merged tree, as the coder is told it. */
interface Checked {
  readonly failures: GateFailureFeedback[];
  readonly runs: GateRun[];
}

/** The last lines of a process's detail, on one line. */
function lastLines(detail: string, n = 3): string {
  const lines = detail
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return lines.length === 0 ? 'no detail' : lines.slice(-n).join(' | ');
}

function listed(paths: readonly string[], max = 5): string {
  return `${paths.slice(0, max).join(', ')}${paths.length > max ? ', …' : ''}`;
}

/** A landing that has done nothing yet. */
export function noLandFacts(): LandFacts {
  return { conflicts: [], failingGates: [], rounds: 0, executors: [], usage: [], notes: [] };
}

class Landing {
  readonly facts: LandFacts = noLandFacts();

  constructor(
    readonly ctx: EpicContext,
    readonly git: LandGitPort,
    readonly req: LandRequest,
  ) {}

  lane(message: string, data?: Record<string, unknown>): void {
    this.ctx.emit('story', message, this.req.job, data);
  }

  note(text: string): void {
    this.facts.notes.push(text);
    this.lane(text);
  }

  /**
   * Runs code epicflow does not trust in a tree (the coder, setup, gates) with
   * git's own configuration guarded: whatever it changed there is put back
   * byte for byte before epicflow runs git again, and noted.
   */
  async guarded<T>(tree: WorktreePort, during: string, work: () => Promise<T>): Promise<T> {
    return withGitConfigGuarded(tree, during, work, (note) => this.note(note));
  }

  /** After untrusted code ran in the land tree: back at `sha`, whatever it committed or left. */
  async holdAt(tree: LandTreePort, sha: string, during: string): Promise<void> {
    const head = await tree.head();
    const dirty = await tree.dirtyPaths();
    if (head === sha && dirty.length === 0) return;
    await tree.detachAt(sha);
    const what = [
      ...(head === sha ? [] : [`committed ${head.slice(0, 12)}`]),
      ...(dirty.length === 0 ? [] : [`left changes in ${listed(dirty)}`]),
    ].join(' and ');
    this.note(`${during} ${what}: discarded (checked as ${sha.slice(0, 12)})`);
  }

  /** Setup and the gates on the tree at `sha`, triaged against the epic head's baseline. */
  async check(tree: LandTreePort, sha: string, baseline: readonly GateRun[]): Promise<Checked> {
    const { ctx } = this;
    const setup = await this.guarded(tree, 'setup', () => ctx.runSetup(tree.path));
    const runs =
      setup === null ? await this.guarded(tree, 'the gates', () => ctx.runGates(tree.path)) : [];
    await this.holdAt(tree, sha, 'the gates');
    if (setup !== null) {
      const command = setup.command;
      const lines = setup.output.trim().split('\n').slice(-5);
      return { failures: [{ command, lines, output: setup.output }], runs };
    }
    const failures: GateFailureFeedback[] = [];
    runs.forEach((run, i) => {
      const verdict = triageGate(run, baseline[i]);
      if (verdict.status !== 'new') return;
      failures.push({
        command: run.command,
        lines: verdict.newLines,
        // The failure lines were read from the whole output; the text may be its tail only.
        output: [...(run.failures ?? []), run.output].join('\n'),
      });
    });
    return { failures, runs };
  }

  /** The conflicting files of `sha` that still hold conflict markers, with their text. */
  async unresolved(sha: string): Promise<LandConflictFile[]> {
    const out: LandConflictFile[] = [];
    for (const path of this.facts.conflicts) {
      const text = await this.git.readBlob(sha, path);
      if (text !== null && conflictMarkerLines(text).length > 0) out.push({ path, text });
    }
    return out;
  }

  /**
   * One coder turn, with the infrastructure outcomes handled as for a story: a
   * usage limit, auth failure or outage hands over to the next coder (at most
   * twice); a rate limit below the exclusion threshold retries. Returns the ok
   * record, or why no coder could do the turn.
   */
  async turn(
    tree: LandTreePort,
    coder: { executor: ExecutorConfig; handovers: number; retries: number },
    round: number,
    prompt: string,
    deadline: number,
  ): Promise<RunRecord | string> {
    const { ctx, req } = this;
    for (;;) {
      if (ctx.interrupt.signal.aborted) return 'interrupted';
      const executor = coder.executor;
      this.lane(`round ${round}: ${executor.id} resolving`);
      const result = await this.guarded(tree, `round ${round} (${executor.id} landing)`, () =>
        ctx.ports.executors(executor).runTurn(
          turnRequest(ctx, executor, {
            story: req.job,
            round,
            role: 'coder',
            prompt,
            worktree: tree.path,
            home: join(ctx.settings.homesDir, req.job, executor.id),
            timeoutMs: Math.max(1000, deadline - ctx.ports.clock.now().getTime()),
          }),
          ctx.interrupt.signal,
        ),
      );
      this.facts.usage = mergeUsage(this.facts.usage, priceUsage(result.usage, ctx.config.prices));
      if (result.outcome === 'ok') return result;
      if (ctx.interrupt.signal.aborted) return 'interrupted';
      if (result.outcome === 'failed' && result.missingBinary !== true) {
        return `coder turn failed (${executor.id}): ${lastLines(result.detail)}`;
      }
      const exclusion =
        result.missingBinary === true
          ? await ctx.roster.missingBinary(executor.id, result.detail)
          : await ctx.roster.signal(executor.id, result.outcome, result.resetAt, result.detail);
      if (exclusion === null) {
        coder.retries += 1;
        this.lane(`${executor.id} was rate limited; trying again`);
        await delay(RATE_LIMIT_BACKOFF_MS * coder.retries, undefined, {
          signal: ctx.interrupt.signal,
        }).catch(() => undefined);
        continue;
      }
      const why = exclusion.reason;
      if (coder.handovers >= MAX_HANDOVERS) {
        return `${executor.id} stopped (${why}) after ${MAX_HANDOVERS} handovers`;
      }
      const next = await ctx.roster.handover(req.job, this.facts.executors);
      if (next === null) return `${executor.id} stopped (${why}) and no other coder can take over`;
      this.lane(`handed over from ${executor.id} to ${next.id}`);
      this.facts.executors.push(next.id);
      coder.executor = next;
      coder.handovers += 1;
      coder.retries = 0;
    }
  }
}

/**
 * Brings `req.branchHead` into the epic branch (from `ctx.epicHead`, where the
 * caller found it). On success the epic branch is at the landed merge (two
 * parents: the epic head and the branch head) and `ctx.epicHead` follows; on
 * failure nothing moved and the tree is gone.
 */
export async function bringIntoEpic(
  ctx: EpicContext,
  git: LandGitPort,
  req: LandRequest,
): Promise<BringInResult> {
  const landing = new Landing(ctx, git, req);
  const { facts } = landing;
  const { epicBranch } = ctx.settings;
  const start = ctx.epicHead;
  const fail = (reason: string): BringInResult => {
    landing.lane(`not landed: ${reason}`);
    return { ok: false, reason, ...facts };
  };
  if (await git.isAncestor(req.branchHead, start)) {
    landing.lane(`${epicBranch} already contains ${req.branch} (${req.branchHead.slice(0, 12)})`);
    return { ok: true, epicHead: start, merged: false, ...facts };
  }
  const maxRounds = req.maxRounds ?? MAX_LAND_ROUNDS;
  const tree = await git.landTree(req.treePath, start);
  let leased = false;
  try {
    // The baseline gates run the epic's code, in the epic's own tree, under the merge lock.
    const baseline = await ctx.merge.run(() =>
      landing.guarded(ctx.epicTree, 'the baseline gates', () => ctx.baseline(start)),
    );
    landing.lane(`merging ${req.branch} (${req.branchHead.slice(0, 12)}) into ${epicBranch}`);
    const conflicts = await tree.mergeNoCommit(req.branchHead);
    facts.conflicts = [...conflicts].sort();
    // The merge as it came, markers and all: what the coder's changes are measured against.
    const merged = await tree.snapshotCommit(
      [start, req.branchHead],
      buildLandMessage({ branch: req.branch, epicBranch, chain: [] }),
    );
    await tree.detachAt(merged);
    const roots = [...new Set([tree.path, await tree.realPath()])];
    let perimeter = [...facts.conflicts];
    let failures: GateFailureFeedback[] = [];
    let runs: GateRun[] = [];
    let checked: string | null = null;
    if (facts.conflicts.length === 0) {
      landing.lane('merged cleanly; running the gates on the merged tree');
      const first = await landing.check(tree, merged, baseline);
      if (ctx.interrupt.signal.aborted) return fail('interrupted');
      ({ failures, runs } = first);
      if (failures.length === 0) checked = merged;
      else {
        facts.failingGates = failures.map((f) => f.command);
        landing.lane(`gates failed on the merged tree: ${facts.failingGates.join(', ')}`);
        perimeter = landPerimeter({
          conflicts: [],
          gateOutputs: failures.map((f) => f.output),
          files: new Set(await git.listFiles(merged)),
          roots,
        });
        if (perimeter.length === 0) {
          return fail(
            `gates failed on the merged tree and name no file of it to fix: ${facts.failingGates.join(', ')}`,
          );
        }
      }
    } else {
      landing.lane(`conflicts in ${listed(facts.conflicts, 10)}`, { conflicts: facts.conflicts });
    }
    if (checked === null) {
      // What either branch changed since they parted: the only paths gates the coder's code
      // ran can add to its perimeter.
      const sides = new Set(
        [
          ...(await tree.changedPaths(start, req.branchHead)),
          ...(await tree.changedPaths(req.branchHead, start)),
        ].map((c) => c.path),
      );
      const first = await ctx.roster.lease(req.job, undefined);
      if (first === null) return fail('no coder is free to land');
      leased = true;
      facts.executors.push(first.id);
      const coder = { executor: first, handovers: 0, retries: 0 };
      const deadline = ctx.ports.clock.now().getTime() + ctx.config.timeouts.storyMs;
      let current = merged;
      let restored: string[] = [];
      let problem = '';
      for (let round = 1; round <= maxRounds && checked === null; round++) {
        const unresolved = await landing.unresolved(current);
        const prompt = buildLandPrompt({
          epic: ctx.settings.epic,
          epicBranch,
          branch: req.branch,
          branchHead: req.branchHead,
          round,
          maxRounds,
          conflicts: facts.conflicts,
          unresolved,
          gateFailures: failures,
          restored,
          perimeter,
          gates: ctx.scope.gates.map((g) => g.label),
          houseRules: ctx.settings.houseRules,
        });
        facts.rounds = round;
        const result = await landing.turn(tree, coder, round, prompt, deadline);
        if (typeof result === 'string') return fail(result);
        let work = await tree.snapshotCommit([current], `${req.job}: round ${round}`, (folders) => {
          for (const folder of folders) landing.note(nestedLeftOut(folder));
          return Promise.resolve();
        });
        await tree.detachAt(work);
        // Only the perimeter may change: against the merge as it came, whatever else moved.
        const changes = await tree.changedPaths(merged, work);
        const strays = strayPaths(
          classifyChanges({
            changes,
            owns: perimeter,
            reads: [],
            configPaths: ctx.settings.configPaths,
            allowWorkflowChanges: ctx.config.allowWorkflowChanges,
            links: await commitLinks(ctx.ports.git, work, changes),
          }),
        );
        restored = strays;
        if (strays.length > 0) {
          await tree.restorePaths(merged, strays);
          work = await tree.snapshotCommit(
            [work],
            `${req.job}: put paths outside the perimeter back`,
          );
          await tree.detachAt(work);
          landing.note(`round ${round}: restored outside the land perimeter: ${strays.join(', ')}`);
        }
        current = work;
        const left = await landing.unresolved(current);
        if (left.length > 0) {
          problem = `conflict markers left in ${left.map((f) => f.path).join(', ')}`;
          landing.lane(`round ${round}: ${problem}`);
          failures = [];
          continue;
        }
        const again = await landing.check(tree, current, baseline);
        if (ctx.interrupt.signal.aborted) return fail('interrupted');
        ({ failures, runs } = again);
        if (failures.length > 0) {
          facts.failingGates = failures.map((f) => f.command);
          problem = `gates failed: ${failures.map((f) => `${f.command}: ${f.lines.slice(0, 3).join('; ') || 'failed'}`).join(' | ')}`;
          landing.lane(`round ${round}: ${problem}`);
          perimeter = [
            ...new Set([
              ...perimeter,
              ...landPerimeter({
                conflicts: [],
                gateOutputs: failures.map((f) => f.output),
                files: new Set(await git.listFiles(current)),
                roots,
                within: sides,
              }),
            ]),
          ].sort();
          continue;
        }
        facts.failingGates = [];
        checked = current;
      }
      if (checked === null) {
        return fail(`${problem} after ${maxRounds} ${maxRounds === 1 ? 'round' : 'rounds'}`);
      }
    }
    // The landed merge: the checked tree, with the epic head and the branch head as parents.
    const landed =
      checked === merged
        ? merged
        : await git.commitTree(
            checked,
            [start, req.branchHead],
            buildLandMessage({ branch: req.branch, epicBranch, chain: facts.executors }),
          );
    if (!(await git.updateRef(`refs/heads/${epicBranch}`, landed, start))) {
      return fail(`${epicBranch} was moved outside epicflow while landing`);
    }
    ctx.epicHead = landed;
    await ctx.rememberBaseline(landed, runs);
    landing.lane(
      `${epicBranch} merged ${req.branch}: ${landed.slice(0, 12)}` +
        (facts.rounds === 0
          ? ''
          : ` (resolved in ${facts.rounds} ${facts.rounds === 1 ? 'round' : 'rounds'})`),
    );
    return { ok: true, epicHead: landed, merged: true, ...facts };
  } finally {
    if (leased) await ctx.roster.release(req.job);
    await git.removeWorktree(req.treePath);
  }
}
