/**
 * `mode: orchestrate` (app-less): the workflow receives the same events the
 * App would (`issues`, `issue_comment`, `workflow_run`, `sub_issues`) and hands
 * them to the same orchestrator entry. Payload fields are read with zod; text
 * fields are data, passed on as such and never evaluated.
 */
import { readFile } from 'node:fs/promises';
import * as core from '@actions/core';
import { z } from 'zod';
import { EpicflowError } from '../core/errors.js';
import { handleEpicEvent, type EpicEvent, type EventIssue } from '../orchestrator/index.js';
import { connectGitHub } from './github.js';
import type { OrchestrateInputs } from './inputs.js';
import { defaultBranchIn, type RunnerContext } from './runner.js';

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
  sender: Sender,
});
const CommentEvent = z.object({
  action: z.string(),
  issue: Issue,
  comment: z.object({ body: z.string() }),
  sender: Sender,
});
const RunEvent = z.object({
  action: z.string(),
  workflow_run: z.object({
    id: z.number().int(),
    path: z.string(),
    // The evaluated `run-name`, naming the run's story; optional in the webhook schema.
    display_title: z.string().optional(),
    conclusion: z.string().nullish(),
  }),
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

/** The orchestrator's event for a workflow event, or null when the event is not one epicflow handles. */
export function toEpicEvent(eventName: string, payload: unknown): EpicEvent | null {
  switch (eventName) {
    case 'issues': {
      const p = parse(IssuesEvent, payload, eventName);
      const sender = { login: p.sender.login, type: p.sender.type };
      if (p.action === 'labeled') {
        return { kind: 'labeled', issue: eventIssue(p.issue), label: p.label?.name ?? '', sender };
      }
      if (p.action === 'edited') return { kind: 'edited', issue: eventIssue(p.issue), sender };
      return null;
    }
    case 'issue_comment': {
      const p = parse(CommentEvent, payload, eventName);
      if (p.action !== 'created') return null;
      return {
        kind: 'comment',
        issue: eventIssue(p.issue),
        body: p.comment.body,
        sender: { login: p.sender.login, type: p.sender.type },
      };
    }
    case 'workflow_run': {
      const p = parse(RunEvent, payload, eventName);
      if (p.action !== 'completed') return null;
      return {
        kind: 'workflow-run',
        runId: p.workflow_run.id,
        workflowPath: p.workflow_run.path,
        displayTitle: p.workflow_run.display_title ?? '',
        conclusion: p.workflow_run.conclusion ?? 'unknown',
      };
    }
    case 'sub_issues': {
      const p = parse(SubIssuesEvent, payload, eventName);
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

async function readEvent(path: string | undefined): Promise<unknown> {
  if (path === undefined || path === '') {
    throw new EpicflowError('usage', 'GITHUB_EVENT_PATH is not set', {
      details: [
        'orchestrate mode runs in a workflow triggered by issues, issue_comment or workflow_run',
      ],
    });
  }
  try {
    return JSON.parse(await readFile(path, 'utf8')) as unknown;
  } catch (e) {
    throw new EpicflowError(
      'usage',
      `cannot read the event payload at ${path}: ${(e as Error).message}`,
    );
  }
}

export async function runOrchestrateMode(input: {
  readonly inputs: OrchestrateInputs;
  readonly runner: RunnerContext;
}): Promise<void> {
  const { inputs, runner } = input;
  const eventName = runner.eventName ?? '';
  const payload = await readEvent(runner.eventPath);
  const event = toEpicEvent(eventName, payload);
  if (event === null) {
    core.info(`nothing to do for ${eventName || 'this event'}`);
    core.setOutput('status', 'ignored');
    return;
  }
  const { repo } = await connectGitHub({ auth: inputs.auth, botLogin: inputs.botLogin, runner });
  const defaultBranch = defaultBranchIn(payload);
  const result = await handleEpicEvent(
    {
      repo,
      ...(defaultBranch === undefined ? {} : { defaultBranch }),
      log: { info: (m) => core.info(m), warn: (m) => core.warning(m) },
    },
    event,
  );
  core.info(
    `${eventName}: ${result.outcome}${result.reason === undefined ? '' : ` (${result.reason})`}` +
      (result.epic === undefined ? '' : ` on epic #${result.epic}`) +
      (result.dispatched.length > 0 ? `; dispatched ${result.dispatched.join(', ')}` : ''),
  );
  core.setOutput('status', result.outcome);
}
