/**
 * A webhook payload as the orchestrator's event: one mapping for the App (probot's
 * `context.name` and `context.payload`) and the Action's orchestrate mode (the
 * payload file the runner wrote). Fields are read with zod; text fields are data,
 * passed on as such and never evaluated. The facts a trust decision rests on are
 * taken along: what an edit changed (`changes.body.from`) and where a workflow run
 * came from (event, branch, repositories, workflow file).
 */
import { z } from 'zod';
import { EpicflowError } from '../core/errors.js';
import type { RunOrigin } from '../core/epic/index.js';
import type { EpicEvent, EventIssue } from './types.js';

const Sender = z.object({ login: z.string(), type: z.string() });
const Label = z.union([z.string(), z.object({ name: z.string().optional() })]);
const Issue = z.object({
  number: z.number().int(),
  title: z.string(),
  body: z.string().nullish(),
  labels: z.array(Label).optional(),
  pull_request: z.unknown().optional(),
});

const IssuesEvent = z.object({
  action: z.string(),
  issue: Issue,
  label: z.object({ name: z.string() }).optional(),
  // `changes.body` is there only when the edit changed the body.
  changes: z.object({ body: z.object({ from: z.string().nullish() }).optional() }).optional(),
  sender: Sender,
});
const CommentEvent = z.object({
  action: z.string(),
  issue: Issue,
  comment: z.object({ body: z.string() }),
  sender: Sender,
});
const RunRepository = z.object({ id: z.number().int(), full_name: z.string() });
const RunEvent = z.object({
  action: z.string(),
  workflow_run: z.object({
    id: z.number().int(),
    // Older payloads (and older GitHub Enterprise Servers) have no `path`: such a run cannot
    // be told to be the story workflow's, so it is not one of ours.
    path: z.string().optional(),
    // The evaluated `run-name`, naming the run's story; optional in the webhook schema.
    display_title: z.string().optional(),
    conclusion: z.string().nullish(),
    event: z.string(),
    head_branch: z.string().nullable(),
    repository: RunRepository,
    head_repository: RunRepository.nullable(),
  }),
  repository: z.object({ id: z.number().int() }).optional(),
});
const ReviewEvent = z.object({
  action: z.string(),
  review: z.object({ state: z.string() }),
  pull_request: z.object({
    number: z.number().int(),
    state: z.string(),
    head: z.object({
      ref: z.string(),
      repo: z.object({ full_name: z.string() }).nullable(),
    }),
  }),
  sender: Sender,
});
const PushEvent = z.object({
  ref: z.string(),
  deleted: z.boolean().optional(),
  sender: Sender,
});
const PullRequestEvent = z.object({
  action: z.string(),
  number: z.number().int(),
  sender: Sender,
});
const SubIssuesEvent = z.object({
  parent_issue: z.object({ number: z.number().int() }).optional(),
  sender: Sender,
});

function eventIssue(issue: z.infer<typeof Issue>): EventIssue {
  return {
    number: issue.number,
    title: issue.title,
    body: issue.body ?? '',
    labels: (issue.labels ?? []).map((l) => (typeof l === 'string' ? l : (l.name ?? ''))),
    isPullRequest: issue.pull_request !== undefined && issue.pull_request !== null,
  };
}

function parse<T>(schema: z.ZodType<T>, payload: unknown, eventName: string): T {
  const r = schema.safeParse(payload);
  if (r.success) return r.data;
  throw new EpicflowError('usage', `the ${eventName} event payload is not what GitHub sends`, {
    details: r.error.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.message}`),
  });
}

/**
 * The orchestrator's event for a webhook (`issues`, `issue_comment`, `workflow_run`,
 * `sub_issues`, `pull_request_review`, `push`, `pull_request`; probot's `issues.edited` form works too), or null when the event is
 * not one epicflow handles. A payload that is not GitHub's throws a 'usage' error.
 */
export function toEpicEvent(eventName: string, payload: unknown): EpicEvent | null {
  const name = eventName.split('.')[0] ?? '';
  switch (name) {
    case 'issues': {
      const p = parse(IssuesEvent, payload, name);
      const sender = { login: p.sender.login, type: p.sender.type };
      if (p.action === 'labeled') {
        return { kind: 'labeled', issue: eventIssue(p.issue), label: p.label?.name ?? '', sender };
      }
      if (p.action !== 'edited') return null;
      const from = p.changes?.body?.from;
      return {
        kind: 'edited',
        issue: eventIssue(p.issue),
        sender,
        // GitHub sends `from: null` when the body was empty before.
        ...(p.changes?.body === undefined ? {} : { previousBody: from ?? '' }),
      };
    }
    case 'issue_comment': {
      const p = parse(CommentEvent, payload, name);
      if (p.action !== 'created') return null;
      return {
        kind: 'comment',
        issue: eventIssue(p.issue),
        body: p.comment.body,
        sender: { login: p.sender.login, type: p.sender.type },
      };
    }
    case 'workflow_run': {
      const p = parse(RunEvent, payload, name);
      if (p.action !== 'completed') return null;
      const run = p.workflow_run;
      if (run.path === undefined) return null;
      const repo = (r: z.infer<typeof RunRepository>): { id: number; fullName: string } => ({
        id: r.id,
        fullName: r.full_name,
      });
      const origin: RunOrigin = {
        event: run.event,
        path: run.path,
        headBranch: run.head_branch,
        repository: repo(run.repository),
        headRepository: run.head_repository === null ? null : repo(run.head_repository),
      };
      return {
        kind: 'workflow-run',
        runId: run.id,
        workflowPath: run.path,
        displayTitle: run.display_title ?? '',
        conclusion: run.conclusion ?? 'unknown',
        origin,
        ...(p.repository === undefined ? {} : { repositoryId: p.repository.id }),
      };
    }
    case 'pull_request_review': {
      const p = parse(ReviewEvent, payload, name);
      if (p.action !== 'submitted') return null;
      return {
        kind: 'review',
        pr: p.pull_request.number,
        open: p.pull_request.state === 'open',
        head: {
          ref: p.pull_request.head.ref,
          repository: p.pull_request.head.repo?.full_name ?? null,
        },
        state: p.review.state.toLowerCase(),
        sender: { login: p.sender.login, type: p.sender.type },
      };
    }
    case 'push': {
      const p = parse(PushEvent, payload, name);
      return {
        kind: 'push',
        ref: p.ref,
        deleted: p.deleted === true,
        sender: { login: p.sender.login, type: p.sender.type },
      };
    }
    case 'pull_request': {
      const p = parse(PullRequestEvent, payload, name);
      if (p.action !== 'closed') return null;
      return {
        kind: 'pr-closed',
        number: p.number,
        sender: { login: p.sender.login, type: p.sender.type },
      };
    }
    case 'sub_issues': {
      const p = parse(SubIssuesEvent, payload, name);
      if (p.parent_issue === undefined) return null;
      return {
        kind: 'sub-issues',
        parent: p.parent_issue.number,
        sender: { login: p.sender.login, type: p.sender.type },
      };
    }
    default:
      return null;
  }
}
