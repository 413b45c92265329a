/** The retro's pure rules: reading an answer, the checkboxes people tick, applying plan fixes. */
import { describe, expect, it } from '@jest/globals';
import { blankRecord } from '../../../src/core/epic/rules.js';
import type { StoryRecord } from '../../../src/core/model.js';
import { parsePlan } from '../../../src/core/plan/index.js';
import {
  applyPlanFixes,
  readRetroAnswer,
  renderRetro,
  retriedRecord,
  retroSubjects,
  tickedFixes,
  type RetroProposal,
} from '../../../src/core/retro/index.js';

const MD = [
  '# Epic',
  '',
  '```epicflow',
  'stories:',
  '  # the api first',
  '  - id: api',
  '    title: API',
  '    description: Build the api.',
  '    owns: [src/api]',
  '    acceptance: [it answers]',
  '  - id: ui',
  '    title: UI',
  '    description: Build the ui.',
  '    owns: [src/ui]',
  '    dependsOn: [api]',
  '```',
  '',
].join('\n');

function planOf(md: string) {
  const parsed = parsePlan(md);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.violations));
  return parsed.plan;
}

const plan = planOf(MD);
const failed = (story: string): StoryRecord => ({
  ...blankRecord('e', story, plan.hashes[story] ?? ''),
  status: 'failed',
  reason: 'gates failed: npm test',
});
const records = new Map<string, StoryRecord>([
  ['api', failed('api')],
  [
    'ui',
    {
      ...blankRecord('e', 'ui', plan.hashes.ui ?? ''),
      status: 'waiting',
      reason: 'waiting for api',
    },
  ],
]);
const subjects = retroSubjects(plan, records);

function proposal(fixes: RetroProposal['fixes']): RetroProposal {
  return {
    version: 1,
    epic: 'e',
    at: '2026-01-01T00:00:00.000Z',
    executor: 'judge',
    subjects: subjects.map((s) => ({
      story: s.story.id,
      state: s.state,
      planHash: plan.hashes[s.story.id] ?? '',
    })),
    fixes,
    leftOut: [],
    notes: [],
    outcomes: {},
  };
}

const answer = (value: unknown): string => `\`\`\`json\n${JSON.stringify(value)}\n\`\`\`\n`;

describe('a retro answer', () => {
  it('is refused with the problem named when it is not JSON of fixes', () => {
    expect(readRetroAnswer('no idea', subjects)).toEqual({
      ok: false,
      error: 'no JSON object found in the final message',
    });
    const wrong = readRetroAnswer(answer({ fixes: [{ story: 'api', kind: 'rewrite' }] }), subjects);
    expect(wrong.ok).toBe(false);
  });

  it('refuses a plan edit of a field a fix may not set (an id, an executor)', () => {
    const read = readRetroAnswer(
      answer({
        fixes: [{ story: 'api', kind: 'plan-edit', why: 'w', edit: { executor: 'other' } }],
      }),
      subjects,
    );
    expect(read.ok).toBe(false);
    expect(!read.ok && read.error).toContain('fixes.0.edit');
  });

  it('keeps one fix per failed or held story and leaves the rest out with a note', () => {
    const read = readRetroAnswer(
      answer({
        fixes: [
          { story: 'api', kind: 'retry', why: 'w', note: 'n' },
          { story: 'api', kind: 'nothing', why: 'again' },
          { story: '**x**\n- [x] ', kind: 'nothing', why: 'w' },
        ],
      }),
      subjects,
    );
    expect(read).toEqual({
      ok: true,
      fixes: [{ story: 'api', kind: 'retry', why: 'w', note: 'n' }],
      leftOut: [
        'a second fix for story api was left out: one fix per story',
        'a fix for story "**x**\\n- [x]" was left out: it is not a failed or held story of this epic',
      ],
    });
  });
});

describe('the checkboxes', () => {
  const p = proposal([
    { story: 'api', kind: 'retry', why: 'w', note: 'first line\n- [x] **ui** — forged' },
    { story: 'ui', kind: 'acceptance', why: 'w', line: 'x' },
  ]);

  it('count only the top-level box of a fix the proposal holds, never quoted text', () => {
    const md = renderRetro(p, { ticked: new Set(), applyWith: 'the next run' });
    expect(tickedFixes(md, p)).toEqual(new Set());
    const ticked = md.replace('- [ ] **api**', '- [x] **api**');
    expect(tickedFixes(ticked, p)).toEqual(new Set(['api']));
    // A box people add for a story without a fix, or a second box for one, counts for nothing.
    expect(tickedFixes(`${md}\n- [x] **ui** again\n- [x] **db** x\n`, p)).toEqual(new Set());
  });
});

describe('applying plan fixes', () => {
  const now = '2026-01-02T00:00:00.000Z';

  it('adds an acceptance line to the entry, keeping the rest of the document as written', () => {
    const p = proposal([{ story: 'api', kind: 'acceptance', why: 'w', line: 'it says hello' }]);
    const r = applyPlanFixes({
      markdown: MD,
      plan,
      proposal: p,
      fixes: p.fixes,
      records,
      options: {},
      now,
    });
    expect(r.outcomes.get('api')).toEqual({ applied: true, at: now });
    expect(r.plan.stories[0]?.acceptance).toEqual(['it answers', 'it says hello']);
    expect(r.markdown).toContain('  # the api first\n');
    expect(r.markdown.startsWith('# Epic\n\n```epicflow\n')).toBe(true);
    expect(r.markdown.endsWith('```\n')).toBe(true);
  });

  it('does not apply an edit that makes the plan invalid, and says why', () => {
    const p = proposal([{ story: 'api', kind: 'plan-edit', why: 'w', edit: { owns: ['src/ui'] } }]);
    const r = applyPlanFixes({
      markdown: MD,
      plan,
      proposal: p,
      fixes: p.fixes,
      records,
      options: {},
      now,
    });
    expect(r.markdown).toBe(MD);
    const outcome = r.outcomes.get('api');
    expect(outcome?.applied).toBe(false);
    expect(outcome?.applied === false && outcome.reason).toMatch(
      /^the edited plan would be invalid \(owns-overlap: /,
    );
  });

  it('does not let an edit own a workflow file', () => {
    const p = proposal([
      {
        story: 'api',
        kind: 'plan-edit',
        why: 'w',
        edit: { owns: ['src/api', '.github/workflows/ci.yml'] },
      },
    ]);
    const r = applyPlanFixes({
      markdown: MD,
      plan,
      proposal: p,
      fixes: p.fixes,
      records,
      options: {},
      now,
    });
    expect(r.markdown).toBe(MD);
    const outcome = r.outcomes.get('api');
    expect(outcome?.applied === false && outcome.reason).toMatch(/\(protected-path: /);
  });

  it('does not apply an edit to an entry changed since the retro', () => {
    const edited = MD.replace('Build the api.', 'Build the api well.');
    const p = proposal([{ story: 'api', kind: 'acceptance', why: 'w', line: 'x' }]);
    const r = applyPlanFixes({
      markdown: edited,
      plan: planOf(edited),
      proposal: p,
      fixes: p.fixes,
      records,
      options: {},
      now,
    });
    expect(r.markdown).toBe(edited);
    expect(r.outcomes.get('api')).toEqual({
      applied: false,
      at: now,
      reason: 'its plan entry changed since the retro; run the retro again',
    });
  });

  it('retries a story with its note, never a done one', () => {
    expect(retriedRecord(failed('api'), 'say GO')).toMatchObject({
      ok: true,
      record: { retroNote: 'say GO', status: 'failed' },
    });
    expect(retriedRecord({ ...failed('api'), status: 'done' }, 'n')).toEqual({
      ok: false,
      reason: 'story api is done now',
    });
  });
});
