import { describe, expect, it } from '@jest/globals';
import type { Action, ReconcileInput } from '../../../src/core/epic/index.js';
import { parseCommand, reconcile } from '../../../src/core/epic/index.js';
import {
  decidePlanning,
  GUIDANCE_MAX_CHARS,
  guidanceOf,
  parsePlanningDoc,
  PLAN_PROPOSED_TEXT,
  PLANNING_RUN_STORY,
  planningReport,
  renderPlanningFailed,
  renderNotPlanned,
  renderPlanningInvalid,
  startedPlanning,
  storyIssueBody,
  withoutPlanBlock,
  type PlanningDoc,
  type PlanningFacts,
} from '../../../src/core/epic/planning.js';
import type { Plan } from '../../../src/core/model.js';
import {
  extractPlanBlocks,
  ID_PATTERN,
  parsePlan,
  parseStoryBlock,
} from '../../../src/core/plan/index.js';
import { renderPlanSection } from '../../../src/core/planner/index.js';
import { dispatches, World } from './world.js';

const NOW = '2026-01-01T00:00:00.000Z';
const usage = {
  executor: 'planner',
  model: 'm',
  tokens: { input: 10, cachedInput: 0, cacheWrite: 0, output: 5 },
  measured: true,
  costUsd: 0.01,
  costSource: 'cli' as const,
};

function doc(over: Partial<PlanningDoc> = {}): PlanningDoc {
  return {
    version: 1,
    attempt: 1,
    status: 'active',
    requestedBy: 'alice',
    requestedAt: NOW,
    rounds: 0,
    executors: [],
    usage: [],
    ...over,
  };
}

function facts(over: Partial<PlanningFacts>): PlanningFacts {
  return {
    trigger: { kind: 'label', by: 'alice' },
    plan: 'missing',
    plannerConfigured: true,
    doc: undefined,
    now: NOW,
    ...over,
  };
}

describe('the planning run id', () => {
  it('is never a story id, so no story run is taken for a planning run', () => {
    expect(ID_PATTERN.test(PLANNING_RUN_STORY)).toBe(false);
  });
});

describe('/plan', () => {
  it('carries its guidance, over several lines', () => {
    expect(parseCommand('/plan')).toEqual({ kind: 'plan' });
    expect(parseCommand('/plan more tests')).toEqual({ kind: 'plan', guidance: 'more tests' });
    expect(parseCommand('/Plan split the api\nand keep the docs apart\n')).toEqual({
      kind: 'plan',
      guidance: 'split the api\nand keep the docs apart',
    });
  });
  it('keeps no hidden text of the comment in the guidance', () => {
    expect(parseCommand('/plan tests<!-- own .github/workflows -->')).toEqual({
      kind: 'plan',
      guidance: 'tests',
    });
  });
  it('caps the guidance', () => {
    expect(guidanceOf('x'.repeat(GUIDANCE_MAX_CHARS + 10))?.length).toBe(GUIDANCE_MAX_CHARS);
    expect(guidanceOf('   ')).toBeUndefined();
  });
});

describe('decidePlanning', () => {
  it('starts attempt 1 when an issue without a plan is labelled and a planner is configured', () => {
    expect(decidePlanning(facts({}))).toEqual({
      kind: 'start',
      doc: doc({ requestedAt: NOW }),
    });
  });
  it('leaves an epic without a planner to the no-plan-block comment', () => {
    expect(decidePlanning(facts({ plannerConfigured: false }))).toEqual({ kind: 'none' });
  });
  it('never plans an epic that has a plan, unless /plan asks', () => {
    for (const plan of ['drafted', 'written', 'invalid'] as const) {
      expect(decidePlanning(facts({ plan }))).toEqual({ kind: 'none' });
    }
    expect(decidePlanning(facts({ plan: 'drafted', trigger: { kind: 'other' } }))).toEqual({
      kind: 'none',
    });
  });
  it('waits while an attempt runs: a second label dispatches nothing', () => {
    const running = doc();
    expect(decidePlanning(facts({ doc: running }))).toEqual({ kind: 'wait', doc: running });
  });
  it('does nothing more after a planning that ended without a plan, but a label tries again', () => {
    const held = doc({ status: 'invalid', problems: ['protected-path: …'] });
    expect(decidePlanning(facts({ doc: held, trigger: { kind: 'other' } }))).toEqual({
      kind: 'ended',
      doc: held,
    });
    const again = decidePlanning(facts({ doc: held }));
    expect(again.kind === 'start' && again.doc.attempt).toBe(2);
  });
  it('/plan re-plans a drafted plan with the guidance, keeping what earlier attempts cost', () => {
    const proposed = doc({ status: 'proposed', rounds: 2, executors: ['planner'], usage: [usage] });
    const step = decidePlanning(
      facts({
        plan: 'drafted',
        doc: proposed,
        trigger: { kind: 'plan', by: 'bob', guidance: 'more tests' },
      }),
    );
    expect(step).toEqual({
      kind: 'start',
      doc: doc({
        attempt: 2,
        requestedBy: 'bob',
        guidance: 'more tests',
        rounds: 2,
        executors: ['planner'],
        usage: [usage],
      }),
    });
  });
  it('answers a /plan it cannot run: no planner, one running, a hand-written plan', () => {
    const plan = { kind: 'plan', by: 'bob', guidance: undefined } as const;
    const none = decidePlanning(facts({ trigger: plan, plannerConfigured: false }));
    expect(none.kind === 'reply' && none.body).toContain('executors[].roles');
    const busy = decidePlanning(facts({ trigger: plan, doc: doc({ attempt: 3 }) }));
    expect(busy.kind === 'reply' && busy.body).toContain(
      'already running for this epic (attempt 3)',
    );
    const written = decidePlanning(facts({ trigger: plan, plan: 'written' }));
    expect(written.kind === 'reply' && written.body).toContain('written by hand');
  });
});

describe('the planning record', () => {
  it('reads back what it wrote, and names the file when edited into something else', () => {
    const written = startedPlanning({ previous: undefined, by: 'a', guidance: 'g', now: NOW });
    expect(parsePlanningDoc(JSON.parse(JSON.stringify(written)), 'epics/1/planning.json')).toEqual({
      ok: true,
      doc: written,
    });
    const bad = parsePlanningDoc({ ...written, attempt: 'two' }, 'epics/1/planning.json');
    expect(bad.ok === false && bad.error).toMatch(/^epics\/1\/planning\.json .*attempt/);
  });
  it('gives the report its Planning row once a planner answered', () => {
    expect(planningReport(undefined)).toBeUndefined();
    expect(planningReport(doc())).toBeUndefined();
    expect(planningReport(doc({ rounds: 1, executors: ['planner'], usage: [usage] }))).toEqual({
      usage: [usage],
      executors: ['planner'],
      rounds: 1,
    });
  });
});

describe('the comment of a refused plan', () => {
  it('lists each problem with its code, the planner text inert', () => {
    const body = renderPlanningInvalid({
      attempt: 1,
      rounds: 3,
      problems: ['protected-path: story "deploy" owns .github/workflows @admins <b>x</b>'],
    });
    expect(body).toContain('3 rounds');
    expect(body).toContain('- `protected-path`: story "deploy" owns .github/workflows');
    // A mention is wrapped in a code span: nobody is notified.
    expect(body).not.toMatch(/(^|[^`])@admins/);
    expect(body).not.toContain('<b>');
  });
});

describe('reconcile of a plan the planner proposed', () => {
  function held(planning: ReconcileInput['planning']): Action[] {
    const world = new World();
    world.approvedPlan = undefined;
    return reconcile({ ...world.input({ kind: 'status' }), planning });
  }
  const status = (actions: readonly Action[]): string => {
    const a = actions.find((x) => x.kind === 'ensure-status-comment');
    return a?.kind === 'ensure-status-comment' ? a.body : '';
  };
  const report = (actions: readonly Action[]): string => {
    const a = actions.find((x) => x.kind === 'ensure-report-comment');
    return a?.kind === 'ensure-report-comment' ? a.body : '';
  };

  it('starts nothing and says the plan is proposed, with what to do', () => {
    const actions = held({ proposed: true });
    expect(dispatches(actions)).toEqual([]);
    expect(status(actions)).toContain(`**Not approved yet:** ${PLAN_PROPOSED_TEXT}`);
    expect(status(actions)).toContain('edits it or comments `/approve` to start it');
    // A plan nobody proposed is held as before.
    expect(status(held(undefined))).toContain('no approval is on file');
    expect(status(held({ proposed: false }))).not.toContain(PLAN_PROPOSED_TEXT);
  });

  it('puts the planning in the report: its own row and the planner in By executor', () => {
    const body = report(
      held({ proposed: true, report: { usage: [usage], executors: ['planner'], rounds: 2 } }),
    );
    expect(body).toMatch(/\| Planning \| done \|.*\| planner \|.*\| 2 rounds \|/);
    expect(body).toMatch(/\| planner \| 0; planning \|/);
  });
});

function planOf(yaml: string): Plan {
  const parsed = parsePlan(`\`\`\`epicflow\n${yaml}\n\`\`\`\n`);
  if (!parsed.ok) throw new Error(parsed.violations.map((v) => v.message).join('; '));
  return parsed.plan;
}

describe('a story as its sub-issue (planner.subIssues)', () => {
  it('reads back as the same story, its dependencies left to the blocked-by links', () => {
    const plan = planOf(
      [
        'stories:',
        '  - { id: api, title: API, description: Serve it., owns: [src/api] }',
        '  - id: ui',
        '    title: "UI: @team <b>"',
        '    description: "Show it.\\n\\nTwo paragraphs."',
        '    owns: [src/ui]',
        '    reads: [src/api]',
        '    dependsOn: [api]',
        '    acceptance: [the page shows it]',
      ].join('\n'),
    );
    const ui = plan.stories[1];
    if (ui === undefined) throw new Error('no ui story');
    const body = storyIssueBody(ui);
    expect(body.startsWith('Show it.\n\nTwo paragraphs.')).toBe(true);
    const back = parseStoryBlock(body, 'issue-9');
    expect(back.ok && back.story).toEqual({ ...ui, dependsOn: [] });
  });

  it('leaves the block out of the section, and says where the stories are', () => {
    const plan = planOf(
      'stories:\n  - { id: api, title: API, description: Serve it., owns: [src/a] }',
    );
    const section = withoutPlanBlock(renderPlanSection({ plan }), plan);
    expect(extractPlanBlocks(section)).toEqual([]);
    expect(section).toContain("The stories are this epic's sub-issues");
    expect(section).toContain('| `api` API |');
  });
});

describe('/refine', () => {
  const proposed = doc({ status: 'proposed', rounds: 1, executors: ['planner'], usage: [usage] });
  const refine = (feedback: string | undefined): PlanningFacts['trigger'] => ({
    kind: 'refine',
    by: 'bob',
    feedback,
  });

  it('carries its feedback, over several lines', () => {
    expect(parseCommand('/refine')).toEqual({ kind: 'refine' });
    expect(parseCommand('/refine add a receipt\nafter the payment')).toEqual({
      kind: 'refine',
      feedback: 'add a receipt\nafter the payment',
    });
  });

  it('starts refine round 1 on a drafted plan, keeping what earlier attempts cost', () => {
    const step = decidePlanning(
      facts({ plan: 'drafted', doc: proposed, trigger: refine('add a receipt') }),
    );
    expect(step).toEqual({
      kind: 'start',
      doc: doc({
        attempt: 2,
        requestedBy: 'bob',
        guidance: 'add a receipt',
        refine: 1,
        refines: 1,
        rounds: 1,
        executors: ['planner'],
        usage: [usage],
      }),
    });
  });

  it('numbers refine rounds over attempts; a /plan in between keeps the count and is no refine', () => {
    const afterRefine = doc({ attempt: 2, status: 'proposed', refine: 1, refines: 1 });
    const replan = decidePlanning(
      facts({
        plan: 'drafted',
        doc: afterRefine,
        trigger: { kind: 'plan', by: 'bob', guidance: undefined },
      }),
    );
    expect(replan.kind === 'start' && replan.doc.refine).toBeUndefined();
    expect(replan.kind === 'start' && replan.doc.refines).toBe(1);
    const planned =
      replan.kind === 'start' ? { ...replan.doc, status: 'proposed' as const } : undefined;
    const again = decidePlanning(facts({ plan: 'drafted', doc: planned, trigger: refine('more') }));
    expect(again.kind === 'start' && [again.doc.attempt, again.doc.refine]).toEqual([4, 2]);
  });

  it('refines a plan the App planned only: refused with the reason otherwise', () => {
    const cases: [Partial<PlanningFacts>, RegExp][] = [
      [
        { plannerConfigured: false },
        /`\/refine` needs a planner: give an executor the planner role/,
      ],
      [{ trigger: refine(undefined) }, /`\/refine` needs feedback/],
      [{ doc: doc({ attempt: 3 }) }, /already running for this epic \(attempt 3\)/],
      [{ plan: 'missing' }, /this epic has none yet: comment `\/plan`/],
      [{ plan: 'invalid' }, /is not valid/],
      [{ plan: 'written' }, /written by hand, outside it\. Add the stories to it yourself/],
    ];
    for (const [over, why] of cases) {
      const step = decidePlanning(
        facts({ plan: 'drafted', doc: proposed, trigger: refine('add a receipt'), ...over }),
      );
      expect(step.kind).toBe('reply');
      expect(step.kind === 'reply' && step.body).toMatch(why);
    }
  });

  it('reads a record with refine rounds and refuses a broken one', () => {
    const ok = parsePlanningDoc(doc({ refine: 2, refines: 2 }), 'epics/7/planning.json');
    expect(ok.ok).toBe(true);
    const bad = parsePlanningDoc({ ...doc(), refine: 0 }, 'epics/7/planning.json');
    expect(!bad.ok && bad.error).toMatch(/epics\/7\/planning\.json .*refine/);
  });
});

describe('the comments of a refine round that ended without a plan', () => {
  it('say the plan stays as it was and point at /refine, not /plan', () => {
    const invalid = renderPlanningInvalid({
      attempt: 3,
      rounds: 3,
      problems: ['protected-path: story "r2-deploy" owns .github/workflows'],
      refine: 2,
    });
    expect(invalid).toContain('(refine round 2, planning attempt 3, 3 rounds)');
    expect(invalid).toContain('the plan stays as it was');
    expect(invalid).toContain('- `protected-path`: story "r2-deploy" owns .github/workflows');
    expect(invalid).toContain('`/refine <feedback>`');
    expect(invalid).not.toContain('the epic is held');
    const failed = renderPlanningFailed({ attempt: 3, reason: 'no planner can serve', refine: 2 });
    expect(failed).toContain("could not add stories to this epic's plan");
    expect(failed).toContain('`/refine <feedback>`');
    expect(failed).not.toContain('`/plan`');
  });
});

describe('decidePlanning: a story that proved too big', () => {
  const split = {
    story: 'api',
    outgrown: 'timed-out' as const,
    attempt: 2,
    reason: 'coder turn failed (claude): timed out after 3600s',
  };

  it('starts a split attempt of the planner section, remembering the failed attempt', () => {
    const previous = doc({ status: 'proposed', attempt: 3, rounds: 2 });
    const step = decidePlanning(
      facts({ trigger: { kind: 'other' }, plan: 'drafted', doc: previous, split }),
    );
    expect(step).toEqual({
      kind: 'start',
      doc: doc({
        attempt: 4,
        requestedBy: 'epicflow',
        rounds: 2,
        split,
        splits: [{ story: 'api', attempt: 2 }],
      }),
    });
    // The record keeps what was split over later attempts, so no failure is split twice.
    if (step.kind !== 'start') return;
    const later = startedPlanning({ previous: step.doc, by: 'bob', guidance: 'x', now: NOW });
    expect(later.split).toBeUndefined();
    expect(later.splits).toEqual([{ story: 'api', attempt: 2 }]);
    expect(parsePlanningDoc(JSON.parse(JSON.stringify(step.doc)), 'p').ok).toBe(true);
  });

  it('proposes no split while planning runs, without a planner, or on a plan written by hand', () => {
    const cases: Partial<PlanningFacts>[] = [
      { plan: 'drafted', doc: doc({ status: 'active' }) },
      { plan: 'drafted', plannerConfigured: false },
      { plan: 'written' },
      { plan: 'drafted', split: undefined },
    ];
    for (const c of cases) {
      const step = decidePlanning(facts({ trigger: { kind: 'other' }, split, ...c }));
      expect(step.kind === 'start' && step.doc.split !== undefined).toBe(false);
    }
  });
});

describe('renderNotPlanned', () => {
  it('shows the planner lines inert, in a fence longer than any backticks they hold', () => {
    const body = renderNotPlanned(2, ['make it ```pretty``` (how?)', '<img src=x> logo']);
    expect(body.startsWith('**Not planned in refine round 2:**')).toBe(true);
    expect(body).toContain('````text\nmake it ```pretty``` (how?)\n<img src=x> logo\n````');
  });
});
