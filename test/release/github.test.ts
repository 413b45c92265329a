/**
 * The project's own `.github/`: its workflows read by GitHub's workflow parser (as
 * test/action/workflows.test.ts does for the templates users copy), least privilege,
 * actions pinned by commit, CI running the README's test command on Node 20 and 24, the
 * release workflow running the scripts the tests run, Dependabot and the templates.
 */
import { describe, expect, it } from '@jest/globals';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  convertWorkflowTemplate,
  NoOperationTraceWriter,
  parseWorkflow,
} from '@actions/workflow-parser';
import YAML from 'yaml';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string): Promise<string> => readFile(join(ROOT, path), 'utf8');

type Step = {
  run?: string;
  uses?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
};
type Job = {
  permissions?: Record<string, string>;
  steps?: Step[];
  strategy?: { matrix?: Record<string, unknown> };
};
type Workflow = { on: Record<string, unknown>; permissions?: unknown; jobs: Record<string, Job> };

async function workflows(): Promise<string[]> {
  return (await readdir(join(ROOT, '.github/workflows'))).filter((f) => /\.ya?ml$/.test(f)).sort();
}

async function parsed(file: string): Promise<{ errors: string[]; doc: Workflow; content: string }> {
  const path = `.github/workflows/${file}`;
  const content = await read(path);
  const result = parseWorkflow({ name: path, content }, new NoOperationTraceWriter());
  if (result.value === undefined) throw new Error(`${path}: nothing parsed`);
  const template = await convertWorkflowTemplate(result.context, result.value);
  const errors = [...result.context.errors.getErrors(), ...(template.errors ?? [])].map((e) =>
    String((e as { message?: string }).message ?? e),
  );
  return { errors, doc: YAML.parse(content) as Workflow, content };
}

describe('.github/workflows', () => {
  it('holds CI and the release', async () => {
    expect(await workflows()).toEqual(['ci.yml', 'release.yml']);
  });

  it.each(['ci.yml', 'release.yml'])(
    '%s parses without an error, with no permission by default and a few per job',
    async (file) => {
      const { errors, doc } = await parsed(file);
      expect(errors).toEqual([]);
      expect(doc.permissions).toEqual({});
      for (const [name, job] of Object.entries(doc.jobs)) {
        expect([name, typeof job.permissions]).toEqual([name, 'object']);
        expect([name, Object.values(job.permissions ?? {}).includes('write-all')]).toEqual([
          name,
          false,
        ]);
      }
      expect(JSON.stringify(doc)).not.toContain('pull_request_target');
    },
  );

  it.each(['ci.yml', 'release.yml'])(
    '%s pins every action by full commit SHA, its tag in a comment',
    async (file) => {
      const { content } = await parsed(file);
      const uses = content.split('\n').filter((l) => /^\s*(-\s+)?uses:/.test(l));
      expect(uses.length).toBeGreaterThan(0);
      for (const line of uses) {
        expect(line).toMatch(
          /uses: [A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/,
        );
      }
    },
  );

  it.each(['ci.yml', 'release.yml'])('%s puts no expression into a run: script', async (file) => {
    const { doc } = await parsed(file);
    for (const job of Object.values(doc.jobs)) {
      for (const step of job.steps ?? [])
        if (step.run !== undefined) expect(step.run).not.toMatch(/\$\{\{/);
    }
  });
});

describe('CI', () => {
  it("runs the README's test command on pushes and pull requests, on Node 20 and 24", async () => {
    const readme = await read('README.md');
    expect(readme).toContain('npm ci && npm test');
    const { doc } = await parsed('ci.yml');
    expect(Object.keys(doc.on).sort()).toEqual(['pull_request', 'push']);
    const test = doc.jobs['test'];
    expect(test?.strategy?.matrix?.['node']).toEqual([20, 24]);
    expect(test?.permissions).toEqual({ contents: 'read' });
    const steps = test?.steps ?? [];
    const setup = steps.find((s) => s.uses?.startsWith('actions/setup-node@') === true);
    expect(setup?.with?.['node-version']).toBe('${{ matrix.node }}');
    // npm's cache keyed by both lockfiles: the root's and the agent CLIs' the tests install.
    expect(String(setup?.with?.['cache-dependency-path']).trim().split('\n')).toEqual([
      'package-lock.json',
      'test/agent-clis/package-lock.json',
    ]);
    expect(steps.at(-1)?.run).toBe('npm ci && npm test');
    const checkout = steps.find((s) => s.uses?.startsWith('actions/checkout@') === true);
    expect(checkout?.with?.['persist-credentials']).toBe(false);
  });
});

describe('the release workflow', () => {
  it('on main, versions through the release pull request and releases with the tested scripts', async () => {
    const { doc } = await parsed('release.yml');
    expect(doc.on).toEqual({ push: { branches: ['main'] } });
    const steps = doc.jobs['release']?.steps ?? [];
    const changesets = steps.find((s) => s.uses?.startsWith('changesets/action@') === true);
    expect(changesets?.with).toMatchObject({
      version: 'npm run release:version',
      publish: 'npm run release',
    });
    expect(doc.jobs['release']?.permissions).toEqual({
      contents: 'write',
      'pull-requests': 'write',
    });
    const pkg = JSON.parse(await read('package.json')) as { scripts: Record<string, string> };
    expect(pkg.scripts['release']).toBe('node scripts/release.mjs');
    expect(pkg.scripts['release:version']).toMatch(/^changeset version && /);
    expect(pkg.scripts['release:verify']).toBe('node scripts/release-verify.mjs');
    // The release builds and verifies with the script npm test runs (test/release/).
    const script = await read('scripts/release.mjs');
    expect(script).toContain("'node scripts/release-verify.mjs'");
    expect(script).toContain('EPICFLOW_ACTION_BUNDLE');
    // It compiles lib/ with the compile of the package's build (npm ci runs it as prepare),
    // which release.test.ts copies instead of running again: the build runs it without the
    // type check (`--noCheck`, the same JavaScript; the type check is npm test's), the
    // release with it.
    expect(script).toContain("const BUILD_LIB = 'npx tsc -p tsconfig.build.json';");
    expect(pkg.scripts['build']).toMatch(/^tsc -p tsconfig\.build\.json --noCheck && /);
  });

  it('publishes to npm only when asked, with provenance and nothing else', async () => {
    const { doc } = await parsed('release.yml');
    expect(doc.jobs['npm']?.permissions).toEqual({ contents: 'read', 'id-token': 'write' });
  });
});

describe('Dependabot and the templates', () => {
  it('updates npm and the pinned actions', async () => {
    const config = YAML.parse(await read('.github/dependabot.yml')) as {
      version: number;
      updates: { 'package-ecosystem': string; directory: string }[];
    };
    expect(config.version).toBe(2);
    expect(config.updates.map((u) => [u['package-ecosystem'], u.directory])).toEqual([
      ['npm', '/'],
      // The agent CLIs the tests run (test/agent-clis), pinned apart from the root's packages.
      ['npm', '/test/agent-clis'],
      ['github-actions', '/'],
    ]);
  });

  it('has issue forms with a name, a description and fields, and a pull request template', async () => {
    const forms = (await readdir(join(ROOT, '.github/ISSUE_TEMPLATE'))).filter(
      (f) => f !== 'config.yml',
    );
    expect(forms.sort()).toEqual(['bug_report.yml', 'feature_request.yml']);
    for (const f of forms) {
      const form = YAML.parse(await read(`.github/ISSUE_TEMPLATE/${f}`)) as {
        name?: string;
        description?: string;
        body?: { type: string; id?: string }[];
      };
      expect([f, typeof form.name, typeof form.description]).toEqual([f, 'string', 'string']);
      const fields = (form.body ?? []).filter((b) => b.type !== 'markdown');
      expect(fields.length).toBeGreaterThan(0);
      for (const field of fields) expect(field.id).toMatch(/^[a-z][a-z0-9_-]*$/);
    }
    expect(await read('.github/PULL_REQUEST_TEMPLATE.md')).toContain('npm ci && npm test');
  });
});
