import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  convertWorkflowTemplate,
  NoOperationTraceWriter,
  parseWorkflow,
} from '@actions/workflow-parser';
import { parseAction } from '@actions/workflow-parser/actions/action-parser';
import YAML from 'yaml';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const STORY = 'examples/workflows/epicflow-story.yml';
const ORCHESTRATE = 'examples/workflows/epicflow-orchestrate.yml';

async function parsed(path: string) {
  const content = await readFile(join(root, path), 'utf8');
  const result = parseWorkflow({ name: path, content }, new NoOperationTraceWriter());
  if (result.value === undefined) throw new Error(`${path}: nothing parsed`);
  const template = await convertWorkflowTemplate(result.context, result.value);
  return {
    errors: [...result.context.errors.getErrors(), ...(template.errors ?? [])].map((e) =>
      String((e as { message?: string }).message ?? e),
    ),
    template,
    doc: YAML.parse(content) as Record<string, unknown>,
    content,
  };
}

type Step = {
  run?: string;
  uses?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
};
type Job = { permissions?: Record<string, string>; steps: Step[] };

function jobs(doc: Record<string, unknown>): Job[] {
  return Object.values(doc['jobs'] as Record<string, Job>);
}

describe.each([STORY, ORCHESTRATE])('%s', (path) => {
  it('parses with the Actions workflow parser without an error', async () => {
    const { errors, template } = await parsed(path);
    expect(errors).toEqual([]);
    expect(template.jobs.length).toBe(1);
  });

  it('starts from no permissions and grants per job only what the job needs', async () => {
    const { doc } = await parsed(path);
    expect(doc['permissions']).toEqual({});
    for (const job of jobs(doc)) {
      expect(job.permissions).toEqual({
        contents: 'write',
        issues: 'write',
        'pull-requests': 'write',
        actions: 'write',
      });
    }
    expect(JSON.stringify(doc)).not.toContain('pull_request_target');
  });

  it('never puts event text, inputs or secrets into a run: script', async () => {
    const { doc } = await parsed(path);
    for (const job of jobs(doc)) {
      for (const step of job.steps) {
        if (step.run === undefined) continue;
        expect(step.run).not.toMatch(/\$\{\{/);
      }
      // Secrets only in the action's env, or as the App's private key of a credentials input.
      for (const step of job.steps) {
        for (const [key, value] of Object.entries(step.with ?? {})) {
          if (!/secrets\./.test(value)) continue;
          const allowed =
            (key === 'private-key' && step.uses === 'actions/create-github-app-token@v3') ||
            (key === 'app-private-key' && step.uses === 'epicflow/epicflow@v1');
          expect([key, step.uses, allowed]).toEqual([key, step.uses, true]);
        }
        if (step.run !== undefined) expect(JSON.stringify(step.env ?? {})).not.toMatch(/secrets\./);
      }
    }
  });
});

describe('the parser as a check', () => {
  it('reports a bad permission and a bad expression (so an empty error list means something)', async () => {
    const content = [
      'on: workflow_dispatch',
      'permissions: { contents: sometimes }',
      'jobs:',
      '  a:',
      '    runs-on: ubuntu-latest',
      '    steps:',
      '      - run: echo ${{ inputs.x ) }}',
      '',
    ].join('\n');
    const result = parseWorkflow({ name: 'bad.yml', content }, new NoOperationTraceWriter());
    expect(result.context.errors.getErrors().length).toBeGreaterThanOrEqual(2);
  });
});

describe('the story workflow', () => {
  it('is dispatched with exactly the three id inputs and runs the action in story mode with persist-credentials off', async () => {
    const { doc, template } = await parsed(STORY);
    const on = doc['on'] as { workflow_dispatch: { inputs: Record<string, unknown> } };
    expect(Object.keys(on.workflow_dispatch.inputs)).toEqual(['epic', 'story', 'attempt']);
    const steps = jobs(doc)[0]?.steps ?? [];
    const checkout = steps.find((s) => s.uses?.startsWith('actions/checkout') === true);
    expect(checkout?.with?.['persist-credentials']).toBe(false);
    const action = steps.find((s) => s.with?.['mode'] === 'story');
    expect(action?.with).toMatchObject({
      epic: '${{ inputs.epic }}',
      story: '${{ inputs.story }}',
      attempt: '${{ inputs.attempt }}',
    });
    expect(
      steps.some((s) => s.run === 'npm install -g @openai/codex @anthropic-ai/claude-code'),
    ).toBe(true);
    // The App's credentials when the App is configured, else GITHUB_TOKEN: never both.
    expect(action?.with).toMatchObject({
      'app-id': '${{ vars.EPICFLOW_APP_CLIENT_ID }}',
      'app-private-key':
        "${{ vars.EPICFLOW_APP_CLIENT_ID != '' && secrets.EPICFLOW_APP_PRIVATE_KEY || '' }}",
      'github-token': "${{ vars.EPICFLOW_APP_CLIENT_ID == '' && github.token || '' }}",
    });
    // The parser sees the same steps.
    const job = template.jobs[0] as { steps?: unknown[] } | undefined;
    expect(job?.steps?.length).toBe(steps.length);
  });
});

describe('the orchestrate workflow', () => {
  it('listens to issues, comments and the story workflow runs', async () => {
    const { doc } = await parsed(ORCHESTRATE);
    const on = doc['on'] as Record<string, { types?: string[]; workflows?: string[] }>;
    expect(Object.keys(on).sort()).toEqual(['issue_comment', 'issues', 'workflow_run']);
    expect(on['workflow_run']?.workflows).toEqual(['epicflow story']);
    const { doc: story } = await parsed(STORY);
    expect(story['name']).toBe('epicflow story');
  });

  it('has no concurrency group, which would cancel pending runs and so drop events', async () => {
    const { doc } = await parsed(ORCHESTRATE);
    expect(doc['concurrency']).toBeUndefined();
    const jobs = doc['jobs'] as Record<string, Record<string, unknown>>;
    for (const job of Object.values(jobs)) expect(job['concurrency']).toBeUndefined();
  });
});

describe('action.yml', () => {
  it('is a valid node24 action with the documented inputs and outputs', async () => {
    const content = await readFile(join(root, 'action.yml'), 'utf8');
    const result = parseAction({ name: 'action.yml', content }, new NoOperationTraceWriter());
    expect(result.context.errors.getErrors().map((e) => e.message)).toEqual([]);
    const doc = YAML.parse(content) as {
      runs: Record<string, string>;
      inputs: Record<string, { required?: boolean; default?: string }>;
      outputs: Record<string, unknown>;
    };
    expect(doc.runs).toEqual({ using: 'node24', main: 'dist/index.js' });
    expect(Object.keys(doc.inputs)).toEqual([
      'mode',
      'epic',
      'story',
      'attempt',
      'github-token',
      'app-id',
      'app-private-key',
      'config',
      'bot-login',
    ]);
    expect(doc.inputs['mode']?.required).toBe(true);
    // A token or the App's credentials: the action checks that exactly one is given.
    for (const name of ['github-token', 'app-id', 'app-private-key']) {
      expect(doc.inputs[name]?.required).toBe(false);
    }
    // The login follows the credentials (the App's own bot with app-id): no fixed default.
    expect(doc.inputs['bot-login']?.default).toBeUndefined();
    expect(doc.inputs['config']?.default).toBe('.github/epicflow.yml');
    expect(Object.keys(doc.outputs)).toEqual(['status', 'merge-sha', 'executor', 'tokens', 'cost']);
  });
});
