/**
 * One set of epic rules: the local run (`decideLocal`, what `epicflow run` decides) and
 * the GitHub reconcile (`reconcile`, what the App and the orchestrating Action decide)
 * are driven by the same random sequences of events — stories merging and failing, plan
 * edits, a cancel, resumes, skips, retries, a budget running out, merges with deferred
 * findings and follow-up rounds over them — and must agree at
 * every step: the same status for every story, and report.md (the local report) and the
 * pull request's report comment showing each story with the same status.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  decideLocal,
  effectiveStatus,
  reportRow,
  type Action,
  type Trigger,
} from '../../../src/core/epic/index.js';
import type { EpicflowConfig } from '../../../src/core/config/index.js';
import { DEFAULT_CONFIG } from '../../../src/core/config/index.js';
import type { Halt, Plan, StoryRecord, StoryStatus } from '../../../src/core/model.js';
import { buildPlan } from '../../../src/core/plan/index.js';
import { renderReport } from '../../../src/core/report/index.js';
import { attemptOf } from '../../../src/core/epic/rules.js';
import { supersededMerge } from '../../../src/core/epic/review.js';
import { completed, story, World } from './world.js';

const NOW = '2026-11-30T10:00:00.000Z';
const USAGE = {
  executor: 'codex',
  model: 'gpt-5',
  tokens: { input: 1000, cachedInput: 0, cacheWrite: 0, output: 100 },
  measured: true,
  costUsd: 1,
  costSource: 'cli' as const,
};

/** The local run as its shell applies `decideLocal`: records, merges, running stories, halt. */
class LocalWorld {
  records = new Map<string, StoryRecord>();
  merged = new Map<string, string>();
  running = new Set<string>();
  startedNow = new Set<string>();
  halt: Halt | undefined;

  constructor(
    public plan: Plan,
    readonly config: EpicflowConfig,
    readonly slots: number,
  ) {}

  step(trigger: Trigger): void {
    // As the shell does: decide, write, start, until a decision changes nothing.
    for (let guard = 0; guard < 20; guard++) {
      const d = decideLocal({
        epic: '12',
        title: 'Checkout rewrite',
        plan: this.plan,
        config: this.config,
        records: this.records,
        merged: this.merged,
        running: this.running,
        startedNow: this.startedNow,
        halt: this.halt,
        freeCoderSlots: Math.max(0, this.slots - this.running.size),
        failFast: false,
        trigger: guard === 0 ? trigger : { kind: 'status' },
        now: NOW,
      });
      for (const a of d.stateActions) {
        if (a.kind === 'set-halt') this.halt = a.halt;
        if (a.kind === 'clear-halt') this.halt = undefined;
      }
      if (d.halt?.kind === 'budget') this.halt ??= d.halt;
      for (const r of d.writes) this.records.set(r.story, r);
      for (const id of d.starts) {
        // What runStory records when it starts (its attempt rule is the shared one), from
        // the record as the decision changed it (a follow-up round) or as stored.
        const prior = d.startRecords.get(id) ?? this.records.get(id);
        const hash = this.plan.hashes[id] ?? '';
        const base = prior ?? {
          version: 1 as const,
          epic: '12',
          story: id,
          planHash: hash,
          status: 'planned' as const,
          branch: `story/12/${id}`,
          attempt: 1,
          executors: [],
          usage: [],
          notes: [],
          timings: {},
        };
        const { reason: _r, finishedAt: _f, ...rest } = base;
        this.records.set(id, {
          ...rest,
          status: 'active',
          planHash: hash,
          attempt: attemptOf(prior, hash),
          startedAt: NOW,
        });
        this.running.add(id);
        this.startedNow.add(id);
      }
      if (d.starts.length === 0 && d.writes.length === 0) return;
    }
  }

  finish(id: string, outcome: 'merge' | 'fail', sha: string, deferred = false): void {
    const r = this.records.get(id);
    if (r === undefined) throw new Error(`no record of ${id}`);
    this.running.delete(id);
    if (outcome === 'merge') {
      this.merged.set(id, sha);
      this.records.set(
        id,
        withDeferred({ ...r, status: 'done', mergeCommit: sha, usage: [USAGE] }, deferred),
      );
    } else {
      this.records.set(id, { ...r, status: 'failed', reason: 'gates failed', usage: [USAGE] });
    }
  }

  status(id: string): StoryStatus {
    if (this.running.has(id)) return 'active';
    return statusOnBranch(this.merged.get(id), this.records.get(id));
  }

  report(): string {
    const waveOf = (id: string): number => this.plan.waves.findIndex((w) => w.includes(id)) + 1;
    return renderReport({
      epic: '12',
      epicBranch: 'epic/12',
      now: NOW,
      stories: this.plan.stories.map((s) =>
        reportRow({
          epic: '12',
          story: s,
          wave: waveOf(s.id),
          hash: this.plan.hashes[s.id] ?? '',
          record: this.running.has(s.id)
            ? { ...(this.records.get(s.id) as StoryRecord), status: 'active' }
            : this.records.get(s.id),
        }),
      ),
      halts: this.halt === undefined ? [] : [this.halt],
    });
  }
}

/** A merge's record as the story lifecycle leaves it: with the findings its judge deferred, or none. */
function withDeferred(record: StoryRecord, deferred: boolean): StoryRecord {
  const { deferred: _d, ...rest } = record;
  return deferred ? { ...rest, deferred: ['minor: name it better'] } : rest;
}

/** Merged wins, unless a running revision (a follow-up round) replaces that merge. */
function statusOnBranch(merge: string | undefined, record: StoryRecord | undefined): StoryStatus {
  const mergeCommit = supersededMerge(record, merge) ? undefined : merge;
  return effectiveStatus({ mergeCommit, record });
}

function githubStatus(world: World, id: string): StoryStatus {
  return statusOnBranch(world.merged.get(id), world.records[id]);
}

/** The status each story shows in a rendered report's story table. */
function shownStatuses(markdown: string, ids: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const id of ids) {
    const m = new RegExp(`^\\| \`${id}\` [^|]*\\| (\\w+) \\|`, 'm').exec(markdown);
    out[id] = m?.[1] ?? 'missing';
  }
  return out;
}

function reportComment(actions: readonly Action[]): string {
  const a = actions.find((x) => x.kind === 'ensure-report-comment');
  if (a?.kind !== 'ensure-report-comment') throw new Error('no report comment');
  return a.body;
}

const graphs = fc.integer({ min: 1, max: 7 }).chain((n) =>
  fc.tuple(
    ...Array.from({ length: n }, (_, i) =>
      fc.subarray(
        Array.from({ length: i }, (_, j) => j),
        { maxLength: Math.min(2, i) },
      ),
    ),
  ),
);

const events = fc.array(
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant('merge' as const),
        pick: fc.nat(9),
        deferred: fc.boolean(),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('deferred' as const) }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('fail' as const), pick: fc.nat(9) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('edit' as const), pick: fc.nat(9) }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constantFrom('cancel' as const, 'resume' as const) }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constantFrom('skip' as const, 'retry' as const),
        pick: fc.nat(9),
      }),
    },
  ),
  { minLength: 1, maxLength: 40 },
);

describe('the local run and the GitHub reconcile decide the same', () => {
  it('end every step in the same statuses, and their reports agree', () => {
    fc.assert(
      fc.property(
        graphs,
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.option(fc.integer({ min: 2, max: 6 }), { nil: undefined }),
        events,
        (deps, concurrency, slots, budgetUsd, sequence) => {
          const ids = deps.map((_, i) => `s${i}`);
          const make = (edited: ReadonlySet<string>): Plan =>
            buildPlan(
              deps.map((d, i) => {
                const id = ids[i] ?? '';
                return story(
                  id,
                  d.map((j) => `s${j}`),
                  edited.has(id) ? `Build ${id}, version 2.` : `Build ${id}.`,
                );
              }),
            );
          const edited = new Set<string>();
          const config = {
            ...DEFAULT_CONFIG,
            concurrency,
            ...(budgetUsd === undefined ? {} : { budget: { usd: budgetUsd } }),
          };
          const world = new World(make(edited), config);
          world.coderSlots = slots;
          const local = new LocalWorld(make(edited), config, slots);

          const agree = (actions: readonly Action[], after: string): void => {
            const github = Object.fromEntries(ids.map((id) => [id, githubStatus(world, id)]));
            const mine = Object.fromEntries(ids.map((id) => [id, local.status(id)]));
            expect({ after, statuses: mine }).toEqual({ after, statuses: github });
            expect({ after, report: shownStatuses(local.report(), ids) }).toEqual({
              after,
              report: shownStatuses(reportComment(actions), ids),
            });
            expect({ after, deferred: local.report().includes('## Deferred') }).toEqual({
              after,
              deferred: reportComment(actions).includes('## Deferred'),
            });
          };

          // The label's decision and the local run's first one.
          const labelled = world.step({ kind: 'label' });
          local.step({ kind: 'rerun' });
          agree(labelled, 'the start');

          let n = 0;
          // Distinct for every event (`s0-1` and `s0-10` must not pad to the same sha).
          const sha = (id: string): string => `${id}-${n}-`.padEnd(40, '0');
          const finish = (id: string, outcome: 'merge' | 'fail', deferred = false): void => {
            const attempt = world.records[id]?.attempt ?? 1;
            if (outcome === 'merge') world.jobMerges(id, sha(id));
            else world.jobFails(id, 'gates failed');
            const r = world.records[id];
            if (r !== undefined) {
              const used = { ...r, usage: [USAGE] };
              world.records[id] = outcome === 'merge' ? withDeferred(used, deferred) : used;
            }
            local.finish(id, outcome, sha(id), deferred);
            const actions = world.step(
              completed(id, attempt, outcome === 'merge' ? 'success' : 'failure'),
            );
            local.step({ kind: 'status' });
            agree(actions, `${outcome} ${id}`);
          };
          /**
           * Commands reach a local epic between runs only (`epicflow run` returns when nothing
           * can run): before one, the running stories finish — merged — on both sides.
           */
          const drained = (): boolean => {
            for (let guard = 0; guard < 50; guard++) {
              const running = ids.filter((id) => local.running.has(id));
              const first = running[0];
              if (first === undefined) return true;
              finish(first, 'merge');
            }
            return false;
          };
          for (const e of sequence) {
            n += 1;
            if (e.kind === 'merge' || e.kind === 'fail') {
              const active = ids.filter((id) => local.running.has(id));
              const id = active[e.pick % Math.max(1, active.length)];
              if (id === undefined) continue;
              finish(id, e.kind, e.kind === 'merge' && e.deferred);
            } else if (e.kind === 'edit') {
              const id = ids[e.pick % ids.length] ?? 's0';
              edited.add(id);
              world.plan = make(edited);
              local.plan = make(edited);
              const actions = world.step(world.bodyEdit());
              local.step({ kind: 'status' });
              agree(actions, `an edit of ${id}`);
            } else if (!drained()) {
              continue;
            } else if (e.kind === 'deferred') {
              const trigger: Trigger = { kind: 'deferred', by: 'alice' };
              const actions = world.step(trigger);
              local.step(trigger);
              agree(actions, 'a follow-up round');
            } else if (e.kind === 'cancel' || e.kind === 'resume') {
              const trigger: Trigger = { kind: e.kind, by: 'alice' };
              const actions = world.step(trigger);
              local.step(trigger);
              agree(actions, e.kind);
            } else if (e.kind === 'skip' || e.kind === 'retry') {
              const id = ids[e.pick % ids.length] ?? 's0';
              const trigger: Trigger = { kind: e.kind, story: id, by: 'alice' };
              const actions = world.step(trigger);
              local.step(trigger);
              agree(actions, `${e.kind} ${id}`);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
