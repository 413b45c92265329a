/**
 * Splits of stories that proved too big, on this machine (docs/planning.md, "A story too
 * big is split"). At the end of `epicflow run`, each story that failed as too big (its
 * coder turn timed out, or its gates were still red after its fix rounds) gets a split
 * drafted by the planner on a read-only checkout of the epic head, kept in the epic's
 * state folder (`splits.json`, shown in `splits.md`). Nothing in the plan changes until
 * `epicflow plan approve PLAN.md` puts an approved split into the plan file.
 */
import YAML from 'yaml';
import { join } from 'node:path';
import type { FileStateStore } from '../../adapters/state/file-store.js';
import type { EpicflowConfig } from '../../core/config/types.js';
import { EpicflowError } from '../../core/errors.js';
import type { Plan, StoryRecord } from '../../core/model.js';
import { parsePlan, readBackAsWritten, splitStory } from '../../core/plan/index.js';
import type { PlanOptions } from '../../core/plan/types.js';
import { outgrownText, proseOf, splitCandidates } from '../../core/planner/index.js';
import { planYaml } from '../../core/planner/render.js';
import {
  EMPTY_SPLITS,
  pendingSplits,
  renderSplits,
  splitProposal,
  splitsDocSchema,
  SPLITS_FILE,
  SPLITS_TEXT,
  type SplitProposal,
  type SplitsDoc,
} from '../../core/planner/split-doc.js';
import { planDocument } from '../../core/planner/split.js';
import type { Untrusted } from '../../adapters/process/untrusted.js';
import { epicOfPlan } from './local-epics.js';
import {
  runLocalKind,
  writeWhole,
  type LocalHooks,
  type LocalJob,
  type LocalKind,
} from './local-job.js';
import { planHere } from './plan-here.js';

/** What `splits.md` says approving does. */
function approveWith(planFile: string): string {
  return `\`epicflow plan approve ${planFile}\``;
}

/** The kept proposals; absent is none, anything else epicflow did not write is an error. */
async function readSplits(store: FileStateStore): Promise<SplitsDoc> {
  const raw = await store.readJson<unknown>(SPLITS_FILE);
  if (raw === null) return EMPTY_SPLITS;
  const parsed = splitsDocSchema.safeParse(raw);
  if (!parsed.success) {
    throw new EpicflowError('state', `${join(store.dir, SPLITS_FILE)} is not one epicflow wrote`, {
      details: ['delete it (and splits.md): the next run proposes splits again'],
    });
  }
  return parsed.data;
}

async function writeSplits(
  store: FileStateStore,
  doc: SplitsDoc,
  planFile: string,
): Promise<string> {
  await store.writeJson(SPLITS_FILE, doc);
  return store.writeText(SPLITS_TEXT, renderSplits(doc, approveWith(planFile)));
}

interface ProposeInput {
  readonly job: LocalJob;
  readonly store: FileStateStore;
  readonly epic: string;
  readonly epicBranch: string;
  readonly plan: Plan;
  /** The plan file's text (its prose is the epic the planner reads) and its name as given. */
  readonly markdown: string;
  readonly planFile: string;
  readonly title: string | undefined;
  readonly config: EpicflowConfig;
  readonly configPaths: readonly string[];
  readonly records: readonly StoryRecord[];
  readonly untrusted: Untrusted;
  readonly emit: (message: string) => void;
}

/**
 * After a run: a split proposal for each story that proved too big and has none for its
 * failed attempt yet; a reminder of proposals still waiting. Never changes the plan.
 */
export async function proposeSplitsLocally(input: ProposeInput): Promise<void> {
  const { job, store, plan, config } = input;
  let doc = await readSplits(store);
  const requests = splitCandidates(plan, input.records, doc.proposals);
  const waiting = pendingSplits(doc).filter((p) => !requests.some((r) => r.story === p.story));
  if (requests.length === 0) {
    for (const p of waiting) {
      input.emit(
        `split: ${p.story} → ${(p.added ?? []).join(', ')} is proposed in ${join(store.dir, SPLITS_TEXT)}; approve it with ${approveWith(input.planFile)}`,
      );
    }
    return;
  }
  const planners = config.executors.filter((e) => e.roles.includes('planner'));
  const head = await job.repo.revParse(`refs/heads/${input.epicBranch}`);
  for (const request of requests) {
    const at = new Date().toISOString();
    const hash = plan.hashes[request.story] ?? '';
    const what = `${request.story} proved too big (${outgrownText(request.outgrown)})`;
    if (planners.length === 0 || head === null) {
      const why =
        planners.length === 0
          ? 'no executor has the planner role (executors[].roles: [coder, planner])'
          : `the epic branch ${input.epicBranch} does not exist`;
      input.emit(`split: ${what}; no split proposed: ${why}; split it in the plan yourself`);
      doc = {
        ...doc,
        proposals: [
          ...doc.proposals,
          splitProposal(request, hash, at, { kind: 'not-proposed', why }),
        ],
      };
      continue;
    }
    input.emit(`split: ${what}; the planner drafts smaller stories in its place`);
    const outcome = await planHere(
      job,
      { config, planners, configPaths: input.configPaths },
      { emit: (m) => input.emit(`split of ${request.story}: ${m}`) },
      {
        scratch: `${input.epic}-split-`,
        runAs: input.untrusted,
        epic: input.epic,
        title: input.title,
        prose: proseOf(input.markdown),
        base: head,
        previous: plan,
        split: request,
      },
    );
    let proposal: SplitProposal;
    if (outcome.kind === 'planned') {
      const added = outcome.plan.stories.filter((s) => !plan.stories.some((p) => p.id === s.id));
      proposal = splitProposal(request, hash, at, {
        kind: 'proposed',
        yaml: planYaml(added),
        added: added.map((s) => s.id),
      });
    } else {
      const why =
        outcome.kind === 'failed'
          ? outcome.reason
          : `the planner's split was still invalid after ${outcome.rounds} rounds (${[...outcome.violations, ...outcome.mustFix].map((v) => v.code).join(', ')})`;
      proposal = splitProposal(request, hash, at, { kind: 'not-proposed', why });
    }
    doc = { ...doc, proposals: [...doc.proposals, proposal] };
    const file = await writeSplits(store, doc, input.planFile);
    input.emit(
      proposal.status === 'proposed'
        ? `split: ${request.story} → ${(proposal.added ?? []).join(', ')} is proposed in ${file}; nothing changes until you approve it with ${approveWith(input.planFile)}`
        : `split: no split of ${request.story} proposed: ${proposal.why ?? ''}`,
    );
  }
  await writeSplits(store, doc, input.planFile);
}

interface ApproveInput {
  readonly store: FileStateStore;
  readonly planPath: string;
  readonly planFile: string;
  readonly markdown: string;
  readonly options: PlanOptions;
  /** Only this story's proposal (default: every one waiting). */
  readonly story?: string | undefined;
}

/** One approved split, as `epicflow plan approve` prints it. */
interface ApprovedSplit {
  readonly story: string;
  readonly added: readonly string[];
}

/**
 * `epicflow plan approve PLAN.md [STORY]`: the waiting split proposals go into the plan
 * file, each checked against the plan as it is now; none waiting is a usage error.
 */
async function approveSplitsLocally(input: ApproveInput): Promise<ApprovedSplit[]> {
  let doc = await readSplits(input.store);
  const waiting = pendingSplits(doc).filter(
    (p) => input.story === undefined || p.story === input.story,
  );
  if (waiting.length === 0) {
    throw new EpicflowError(
      'usage',
      input.story === undefined
        ? `no split proposal waits for approval for ${input.planFile}`
        : `no split proposal of story ${input.story} waits for approval for ${input.planFile}`,
      { details: [`the proposals are listed in ${join(input.store.dir, SPLITS_TEXT)}`] },
    );
  }
  let markdown = input.markdown;
  const approved: ApprovedSplit[] = [];
  for (const p of waiting) {
    const parsed = parsePlan(markdown, input.options);
    if (!parsed.ok) {
      throw new EpicflowError('plan', `invalid plan in ${input.planFile}`, {
        details: parsed.violations.map((v) => `${v.code}: ${v.message}`),
      });
    }
    const plan = parsed.plan;
    if (plan.hashes[p.story] !== p.storyHash) {
      throw new EpicflowError(
        'usage',
        `story ${p.story} ${plan.hashes[p.story] === undefined ? 'is no longer in' : 'changed in'} ${input.planFile} since its split was proposed`,
        {
          details: [
            'the proposal no longer fits the plan; the next run proposes again if the story fails again',
          ],
        },
      );
    }
    const entries = (YAML.parse(p.yaml ?? '') as { stories?: unknown } | null)?.stories;
    const split = splitStory(
      plan,
      p.story,
      Array.isArray(entries) ? (entries as Record<string, unknown>[]) : [],
      input.options,
    );
    if (!split.result.ok) {
      throw new EpicflowError('plan', `the split of ${p.story} no longer fits ${input.planFile}`, {
        details: split.result.violations.map((v) => `${v.code}: ${v.message}`),
      });
    }
    const next = planDocument(
      markdown,
      split.result.plan,
      `Split of \`${p.story}\` approved: run it with \`epicflow run ${input.planFile}\`.`,
    );
    if (next === undefined) {
      throw new EpicflowError(
        'plan',
        `${input.planFile} does not hold exactly one \`\`\`epicflow block`,
      );
    }
    readBackAsWritten(parsePlan(next, input.options), split.result.plan, 'the plan with the split');
    markdown = next;
    approved.push({ story: p.story, added: split.added });
    doc = {
      ...doc,
      proposals: doc.proposals.map((q) =>
        q === p ? { ...q, status: 'approved' as const, approvedAt: new Date().toISOString() } : q,
      ),
    };
  }
  await writeWhole(input.planPath, markdown);
  await writeSplits(input.store, doc, input.planFile);
  return approved;
}

/** `epicflow plan approve PLAN.md [STORY]`'s options, as the command line gives them. */
interface ApproveOptions {
  readonly file: string;
  readonly story?: string | undefined;
  readonly repo?: string | undefined;
  readonly config?: string | undefined;
  readonly epic?: string | undefined;
}

/** `plan approve`: the plan file and its epic checked, then the waiting splits put into it. */
const approveKind: LocalKind<
  ApproveOptions,
  LocalHooks,
  {
    readonly planPath: string;
    readonly markdown: string;
    readonly options: PlanOptions;
    readonly epic: string;
  },
  { readonly approved: readonly ApprovedSplit[]; readonly planPath: string }
> = {
  async prepare(job, options) {
    const { path: planPath, text: markdown } = await job.input(options.file, 'plan');
    const { planOptions } = await job.config(options.config, { deferEnv: true });
    return { planPath, markdown, options: planOptions, epic: epicOfPlan(planPath, options.epic) };
  },
  async run(job, { planPath, markdown, options: planOptions, epic }, options) {
    const store = await job.lock(job.folders(epic));
    const approved = await approveSplitsLocally({
      store,
      planPath,
      planFile: options.file,
      markdown,
      options: planOptions,
      story: options.story,
    });
    return { approved, planPath };
  },
};

/** `epicflow plan approve PLAN.md [STORY]` on this machine. */
export function approveSplitsFromCli(
  options: ApproveOptions,
  hooks: LocalHooks,
): Promise<{ readonly approved: readonly ApprovedSplit[]; readonly planPath: string }> {
  return runLocalKind(approveKind, options, hooks);
}
