/**
 * `mode: orchestrate` (app-less): the workflow receives the same events the
 * App would (`issues`, `issue_comment`, `workflow_run`, `sub_issues`, `push`, `pull_request`) and hands
 * them to the same orchestrator entry, mapped from the payload file by the
 * orchestrator's `toEpicEvent`.
 */
import { readFile } from 'node:fs/promises';
import * as core from '@actions/core';
import { EpicflowError } from '../core/errors.js';
import { handleEpicEvent, toEpicEvent } from '../orchestrator/index.js';
import { connectGitHub } from './github.js';
import type { OrchestrateInputs } from './inputs.js';
import { defaultBranchIn, type RunnerContext } from './runner.js';

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
