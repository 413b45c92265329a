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
type Job = { permissions?: Record<string, string>; steps: Step[] };

function jobs(doc: Record<string, unknown>): Job[] {
  return Object.values(doc['jobs'] as Record<string, Job>);
}

describe.each(TEMPLATES)('%s', (path, variant) => {
  it('parses with the Actions workflow parser without an error', async () => {
    const { errors, template } = await parsed(path);
    expect(errors).toEqual([]);
    expect(template.jobs.length).toBe(1);
  });

  it('starts from no permissions and grants per job only what the job needs', async () => {
    const { doc } = await parsed(path);
    expect(doc['permissions']).toEqual({});
    for (const job of jobs(doc)) {
      if (variant === 'github-token') {
        expect(job.permissions).toEqual(WRITE_SCOPES);
      } else {
        // The App's tokens make every write: GITHUB_TOKEN reads the checkout at most.
        expect(job.permissions).toEqual(path.endsWith('-story.yml') ? { contents: 'read' } : {});
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
    const { doc, content } = await parsed(path);
    const action = jobs(doc)
      .flatMap((j) => j.steps)
      .find((s) => s.uses === 'epicflow/epicflow@v0');
    const credentials = {
      'app-id': action?.with?.['app-id'],
      'app-private-key': action?.with?.['app-private-key'],
      'github-token': action?.with?.['github-token'],
    };
    if (variant === 'app') {
      expect(credentials).toEqual({
        'app-id': '${{ vars.EPICFLOW_APP_CLIENT_ID }}',
        'app-private-key': '${{ secrets.EPICFLOW_APP_PRIVATE_KEY }}',
        'github-token': undefined,
      });
      expect(content).not.toContain('github.token');
    } else {
      expect(credentials).toEqual({
        'app-id': undefined,
        'app-private-key': undefined,
        'github-token': '${{ github.token }}',
      });
    }
    expect(action?.with?.['bot-login']).toBe('${{ vars.EPICFLOW_BOT_LOGIN }}');
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
    const steps = jobs(doc)[0]?.steps ?? [];
    const checkout = steps.find((s) => s.uses?.startsWith('actions/checkout') === true);
    expect(checkout?.with?.['persist-credentials']).toBe(false);
    const action = steps.find((s) => s.with?.['mode'] === 'story');
    expect(action?.with).toMatchObject({
      epic: '${{ inputs.epic }}',
      story: '${{ inputs.story }}',
      attempt: '${{ inputs.attempt }}',
    });
    // The parser sees the same steps.
    const job = template.jobs[0] as { steps?: unknown[] } | undefined;
    expect(job?.steps?.length).toBe(steps.length);
  });

  it('installs the agent CLIs at the versions epicflow is tested with (package.json)', async () => {
    const { doc } = await parsed(storyOf(variant));
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    const install = jobs(doc)
      .flatMap((j) => j.steps)
      .find((s) => s.run?.startsWith('npm install -g ') === true);
    const packages = (install?.run ?? '').split(/\s+/).slice(3);
    expect(packages.map((p) => p.replace(/@[^@/]+$/, ''))).toEqual([
      '@openai/codex',
      '@anthropic-ai/claude-code',
    ]);
    for (const spec of packages) {
      const at = spec.lastIndexOf('@');
      const [name, version] = [spec.slice(0, at), spec.slice(at + 1)];
      expect([name, version]).toEqual([name, pkg.devDependencies[name]]);
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
      'bot-login',
    ]);
    expect(doc.inputs['mode']?.required).toBe(true);
    // Isolated unless the workflow says otherwise, in so many words.
    expect(doc.inputs['agent-user']?.default).toBe('epicflow-agent');
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
      'logs',
    ]);
  });
});
