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
/** The templates users copy: with the App's credentials, or with GITHUB_TOKEN. */
const VARIANTS = ['app', 'github-token'] as const;
type Variant = (typeof VARIANTS)[number];
const storyOf = (v: Variant): string => `examples/workflows/${v}/epicflow-story.yml`;
const orchestrateOf = (v: Variant): string => `examples/workflows/${v}/epicflow-orchestrate.yml`;
const TEMPLATES: [string, Variant][] = VARIANTS.flatMap((v) => [
  [storyOf(v), v] as [string, Variant],
  [orchestrateOf(v), v] as [string, Variant],
]);
/** What GITHUB_TOKEN may make every write with (the token variant's jobs). */
const WRITE_SCOPES = {
  contents: 'write',
  issues: 'write',
  'pull-requests': 'write',
  actions: 'write',
};

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
type Job = {
  permissions?: Record<string, string>;
  needs?: string;
  if?: string;
  steps: Step[];
};

function jobs(doc: Record<string, unknown>): Job[] {
  return Object.values(doc['jobs'] as Record<string, Job>);
}

function jobNamed(doc: Record<string, unknown>, name: string): Job {
  const job = (doc['jobs'] as Record<string, Job>)[name];
  if (job === undefined) throw new Error(`no job ${name}`);
  return job;
}

const epicflowStep = (job: Job): Step | undefined =>
  job.steps.find((s) => s.uses === 'epicflow/epicflow@v0');

/** What GITHUB_TOKEN may do in each job of a template, by variant. */
function expectedPermissions(path: string, variant: Variant): Record<string, unknown> {
  if (!path.endsWith('-story.yml')) return { orchestrate: variant === 'app' ? {} : WRITE_SCOPES };
  const work = { contents: 'read', issues: 'read', 'pull-requests': 'read' };
  return variant === 'app' ? { work, publish: {} } : { work, publish: WRITE_SCOPES };
}

describe.each(TEMPLATES)('%s', (path, variant) => {
  it('parses with the Actions workflow parser without an error', async () => {
    const { errors, template } = await parsed(path);
    expect(errors).toEqual([]);
    expect(template.jobs.length).toBe(path.endsWith('-story.yml') ? 2 : 1);
  });

  it('starts from no permissions and grants per job only what the job needs', async () => {
    const { doc } = await parsed(path);
    expect(doc['permissions']).toEqual({});
    const granted = Object.fromEntries(
      Object.entries(doc['jobs'] as Record<string, Job>).map(([name, job]) => [
        name,
        job.permissions,
      ]),
    );
    expect(granted).toEqual(expectedPermissions(path, variant));
    if (variant === 'app') {
      // The App's tokens make every write: GITHUB_TOKEN reads the checkout at most.
      for (const job of jobs(doc)) {
        expect(Object.values(job.permissions ?? {})).not.toContain('write');
      }
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
            (key === 'app-private-key' && step.uses === 'epicflow/epicflow@v0');
          expect([key, step.uses, allowed]).toEqual([key, step.uses, true]);
        }
        if (step.run !== undefined) expect(JSON.stringify(step.env ?? {})).not.toMatch(/secrets\./);
      }
    }
  });

  it('pins every action from elsewhere to a full commit sha, its release tag beside it', async () => {
    const { content } = await parsed(path);
    const uses = content
      .split('\n')
      .map((line) => /^\s*-?\s*uses:\s*(.*)$/.exec(line)?.[1]?.trim())
      .filter((u): u is string => u !== undefined);
    expect(uses.length).toBeGreaterThan(0);
    for (const use of uses) {
      // epicflow's own action: the user picks its release.
      if (use.startsWith('epicflow/epicflow@')) continue;
      expect(use).toMatch(/^[A-Za-z0-9-]+\/[A-Za-z0-9._/-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
    }
  });

  it('gives the action exactly one kind of credentials: the App’s, or GITHUB_TOKEN', async () => {
    const { doc } = await parsed(path);
    const writers = Object.entries(doc['jobs'] as Record<string, Job>).filter(
      ([name]) => name !== 'work',
    );
    expect(writers.length).toBeGreaterThan(0);
    for (const [, job] of writers) {
      const action = epicflowStep(job);
      const credentials = {
        'app-id': action?.with?.['app-id'],
        'app-private-key': action?.with?.['app-private-key'],
        'github-token': action?.with?.['github-token'],
      };
      expect(credentials).toEqual(
        variant === 'app'
          ? {
              'app-id': '${{ vars.EPICFLOW_APP_CLIENT_ID }}',
              'app-private-key': '${{ secrets.EPICFLOW_APP_PRIVATE_KEY }}',
              'github-token': undefined,
            }
          : {
              'app-id': undefined,
              'app-private-key': undefined,
              'github-token': '${{ github.token }}',
            },
      );
      expect(action?.with?.['bot-login']).toBe('${{ vars.EPICFLOW_BOT_LOGIN }}');
    }
  });
});

describe.each(VARIANTS)('the %s story workflow splits a story in two jobs', (variant) => {
  it('the work job holds no write credential: a read-only token, model keys only', async () => {
    const { doc } = await parsed(storyOf(variant));
    const work = jobNamed(doc, 'work');
    // Read, and only read: the checkout, the records, and the epic issue and pull request it
    // reads (on a private repository a scope left out reads nothing).
    expect(work.permissions).toEqual(expectedPermissions(storyOf(variant), variant)['work']);
    const action = epicflowStep(work);
    expect(action?.with).toMatchObject({ mode: 'story', phase: 'work' });
    expect(action?.with?.['github-token']).toBe('${{ github.token }}');
    expect(action?.with?.['app-id']).toBeUndefined();
    expect(action?.with?.['app-private-key']).toBeUndefined();
    // No step of the job sees the App's key, nor any secret but the executors' model keys.
    const text = JSON.stringify(work);
    expect(text).not.toContain('EPICFLOW_APP_PRIVATE_KEY');
    const secrets = [...text.matchAll(/secrets\.([A-Z0-9_]+)/g)].map((m) => m[1]);
    expect(secrets.sort()).toEqual(['ANTHROPIC_API_KEY', 'OPENAI_API_KEY']);
  });

  it('the publish job needs the work job, checks nothing out and runs no script', async () => {
    const { doc } = await parsed(storyOf(variant));
    const publish = jobNamed(doc, 'publish');
    const work = jobNamed(doc, 'work');
    expect(publish.needs).toBe('work');
    expect(publish.if).toBe("${{ always() && needs.work.result != 'skipped' }}");
    expect(publish.steps.map((s) => s.uses ?? 'run')).toEqual([
      'actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093',
      'epicflow/epicflow@v0',
    ]);
    // It downloads exactly what the work job uploads, into the folder the action reads.
    const upload = work.steps.find((s) => s.uses?.startsWith('actions/upload-artifact') === true);
    const download = publish.steps[0];
    expect(download?.with?.['name']).toBe(upload?.with?.['name']);
    expect(upload?.with?.['name']).toContain('epicflow-result-');
    expect(upload?.with?.['path']).toBe('${{ steps.epicflow.outputs.result }}');
    const action = epicflowStep(publish);
    expect(action?.with).toMatchObject({
      mode: 'story',
      phase: 'publish',
      result: download?.with?.['path'],
      'work-outcome': '${{ needs.work.result }}',
    });
    // No model key: it runs no agent.
    expect(JSON.stringify(publish)).not.toMatch(/API_KEY/);
  });

  it('runs every kind (a story, planning, a retro, a landing) in the two jobs: no job of one', async () => {
    const { doc } = await parsed(storyOf(variant));
    expect(Object.keys(doc['jobs'] as Record<string, Job>)).toEqual(['work', 'publish']);
    expect(jobNamed(doc, 'work').if).toBeUndefined();
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

describe.each(VARIANTS)('the %s story workflow', (variant) => {
  it('is dispatched with exactly the three id inputs and runs the action in story mode with persist-credentials off', async () => {
    const { doc, template } = await parsed(storyOf(variant));
    const on = doc['on'] as { workflow_dispatch: { inputs: Record<string, unknown> } };
    expect(Object.keys(on.workflow_dispatch.inputs)).toEqual(['epic', 'story', 'attempt']);
    for (const [i, job] of jobs(doc).entries()) {
      const { steps } = job;
      const checkout = steps.find((s) => s.uses?.startsWith('actions/checkout') === true);
      if (checkout !== undefined) expect(checkout.with?.['persist-credentials']).toBe(false);
      const action = steps.find((s) => s.with?.['mode'] === 'story');
      expect(action?.with).toMatchObject({
        epic: '${{ inputs.epic }}',
        story: '${{ inputs.story }}',
        attempt: '${{ inputs.attempt }}',
      });
      // The parser sees the same steps.
      const parsedJob = template.jobs[i] as { steps?: unknown[] } | undefined;
      expect(parsedJob?.steps?.length).toBe(steps.length);
    }
  });

  it('installs the agent CLIs at the versions epicflow is tested with (test/agent-clis)', async () => {
    const { doc } = await parsed(storyOf(variant));
    const pkg = JSON.parse(await readFile(join(root, 'test/agent-clis/package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const install = jobNamed(doc, 'work').steps.find(
      (s) => s.run?.startsWith('npm install -g ') === true,
    );
    const packages = (install?.run ?? '').split(/\s+/).slice(3);
    expect(packages.map((p) => p.replace(/@[^@/]+$/, ''))).toEqual([
      '@openai/codex',
      '@anthropic-ai/claude-code',
    ]);
    for (const spec of packages) {
      const at = spec.lastIndexOf('@');
      const [name, version] = [spec.slice(0, at), spec.slice(at + 1)];
      expect([name, version]).toEqual([name, pkg.dependencies[name]]);
      expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    }
  });
});

describe('the two variants', () => {
  it('differ only in what GITHUB_TOKEN may do and which credentials the action gets', async () => {
    for (const pathOf of [storyOf, orchestrateOf]) {
      const [app, token] = await Promise.all(
        VARIANTS.map(async (v) => (await parsed(pathOf(v))).doc),
      );
      const strip = (doc: Record<string, unknown> | undefined): unknown =>
        JSON.parse(
          JSON.stringify(doc, (key, value: unknown) =>
            ['permissions', 'app-id', 'app-private-key', 'github-token'].includes(key)
              ? undefined
              : value,
          ),
        );
      expect(strip(app)).toEqual(strip(token));
    }
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
      'agent-user',
      'allow-unisolated-agent',
      'sandbox',
      'phase',
      'result',
      'work-outcome',
      'bot-login',
    ]);
    expect(doc.inputs['mode']?.required).toBe(true);
    // Isolated unless the workflow says otherwise, in so many words: by the kernel sandbox,
    // as the runner itself where it is not root, else as the agent user chosen in the core.
    expect(doc.inputs['agent-user']?.default).toBe('');
    expect(doc.inputs['allow-unisolated-agent']?.default).toBe('false');
    // The kernel sandbox is on unless the workflow says otherwise.
    expect(doc.inputs['sandbox']?.default).toBe('true');
    // A token or the App's credentials: the action checks that exactly one is given.
    for (const name of ['github-token', 'app-id', 'app-private-key']) {
      expect(doc.inputs[name]?.required).toBe(false);
    }
    // The login follows the credentials (the App's own bot with app-id): no fixed default.
    expect(doc.inputs['bot-login']?.default).toBeUndefined();
    expect(doc.inputs['config']?.default).toBe('.github/epicflow.yml');
    expect(Object.keys(doc.outputs)).toEqual([
      'status',
      'merge-sha',
      'executor',
      'tokens',
      'cost',
      'result',
      'logs',
    ]);
  });
});
