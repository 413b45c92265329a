/**
 * The package as a user gets it: `npm pack` of the current work (the files git would
 * commit, with lib/ built by tsc, see test/support/built-package.ts), installed into an
 * empty folder from the tarball (npm's cache first), then the INSTALLED `epicflow` run:
 * --help, --version, plan check, init, and a two-story local run with a `command`
 * executor. A missing `files` entry, an import of a devDependency or a wrong `bin` fails
 * here. One pack and one install for the whole file.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { builtPackage } from '../support/built-package.js';
import { stageCheckout } from '../support/staged-checkout.js';

const run = promisify(execFile);
let work: string;
let consumer: string;
let version: string;

/** The environment without what `npm test` itself put there (lifecycle and package variables). */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !/^npm_(lifecycle|package|config_(prefix|global|local_prefix))/i.test(k) &&
        k !== 'INIT_CWD',
    ),
  );
}

/** The installed CLI, as `npx epicflow` runs it from the consumer's node_modules/.bin. */
function epicflow(
  args: string[],
  cwd = consumer,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      join(consumer, 'node_modules/.bin/epicflow'),
      args,
      { cwd, env: { ...cleanEnv(), GITHUB_TOKEN: '' }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const PLAN = `# Greetings

\`\`\`epicflow
stories:
  - id: hello
    title: Say hello
    description: Write src/hello.txt.
    owns: [src/hello.txt]
  - id: bye
    title: Say goodbye
    description: Write src/bye.txt.
    dependsOn: [hello]
    owns: [src/bye.txt]
\`\`\`
`;

/** A coder for the command harness: writes the one file its story owns. */
const CODER = `import { mkdirSync, writeFileSync } from 'node:fs';
const story = process.env.EPICFLOW_STORY;
mkdirSync('src', { recursive: true });
writeFileSync(\`src/\${story}.txt\`, \`\${story}\\n\`);
process.stdout.write('EPICFLOW_USAGE ' + JSON.stringify({ input: 10, output: 5, model: 'smoke' }) + '\\n');
`;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'epicflow-smoke-'));
  const staged = join(work, 'epicflow');
  await stageCheckout(staged);
  await rm(join(staged, 'lib'), { recursive: true, force: true });
  await cp(join(await builtPackage(), 'lib'), join(staged, 'lib'), { recursive: true });
  version = (
    JSON.parse(await readFile(join(staged, 'package.json'), 'utf8')) as { version: string }
  ).version;
  const env = cleanEnv();
  await run('npm', ['pack', '--ignore-scripts', '--pack-destination', work], { cwd: staged, env });
  const tarball = join(work, `epicflow-${version}.tgz`);
  consumer = join(work, 'consumer');
  await mkdir(consumer);
  await writeFile(join(consumer, 'package.json'), '{ "name": "consumer", "private": true }\n');
  await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball],
    {
      cwd: consumer,
      env,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
}, 900_000);

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('the installed package', () => {
  it('holds the built code, the manifests and the templates, and no sources or tests', async () => {
    const root = join(consumer, 'node_modules/epicflow');
    for (const f of [
      'lib/cli/main.js',
      'lib/app/index.js',
      'action.yml',
      'app.yml',
      'schema.json',
      'CHANGELOG.md',
      'LICENSE',
    ]) {
      expect([f, existsSync(join(root, f))]).toEqual([f, true]);
    }
    expect((await readdir(join(root, 'examples/workflows'))).length).toBeGreaterThan(0);
    for (const f of ['src', 'test', 'scripts', 'dist'])
      expect([f, existsSync(join(root, f))]).toEqual([f, false]);
  });

  it('epicflow --help lists the commands; --version prints the package version', async () => {
    const help = await epicflow(['--help']);
    expect(help.code).toBe(0);
    for (const c of ['plan', 'run', 'status', 'roster', 'init', 'doctor', 'clean'])
      expect(help.stdout).toMatch(new RegExp(`^  ${c}\\b`, 'm'));
    expect(await epicflow(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('epicflow plan check validates a plan', async () => {
    await writeFile(join(consumer, 'plan.md'), PLAN);
    expect(await epicflow(['plan', 'check', 'plan.md'])).toEqual({
      code: 0,
      stdout: 'valid: 2 stories in 2 waves\n',
      stderr: '',
    });
  });

  it('epicflow init writes the workflows with the Action at the release tag', async () => {
    const repo = join(work, 'init-repo');
    await mkdir(repo);
    const r = await epicflow(['init', '--appless', '--dir', repo]);
    // Nothing to detect gates from, and not a git repository (the default branch is a
    // guess): init says both.
    expect(r).toMatchObject({
      code: 0,
      stderr:
        'warning: no gates were detected (no package.json, pyproject.toml, requirements.txt, go.mod or Cargo.toml): stories would be judged by the perimeter alone; add the commands that must pass before a story merges to gates:\n' +
        'warning: not a git repository: taking "main" as the default branch; change branches: in the orchestrate workflow if that is wrong\n',
    });
    const story = await readFile(join(repo, '.github/workflows/epicflow-story.yml'), 'utf8');
    expect(story).toMatch(new RegExp(`uses: [^/\\s]+/epicflow@v${version.split('.')[0]}\\n`));
    expect(existsSync(join(repo, '.github/workflows/epicflow-orchestrate.yml'))).toBe(true);
    expect(existsSync(join(repo, '.github/epicflow.yml'))).toBe(true);
  });

  it('epicflow run delivers a two-story epic with a command executor', async () => {
    const repo = join(work, 'run-repo');
    await mkdir(repo);
    const git = (...args: string[]): string =>
      execFileSync('git', args, {
        cwd: repo,
        env: { ...cleanEnv(), GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
      })
        .toString('utf8')
        .trim();
    await writeFile(join(repo, 'README.md'), '# greetings\n');
    await writeFile(join(work, 'coder.mjs'), CODER);
    await writeFile(
      join(repo, 'epicflow.yml'),
      [
        'executors:',
        '  - id: scripted',
        '    harness: command',
        `    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(join(work, 'coder.mjs'))}]`,
        'gates: ["node -e \\"process.exit(0)\\""]',
        'fixRounds: 0',
        '',
      ].join('\n'),
    );
    git('init', '-q', '-b', 'main');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'start');
    await writeFile(join(work, 'greetings.md'), PLAN);
    const r = await epicflow(['run', join(work, 'greetings.md'), '--repo', repo], repo);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(git('show', 'epic/greetings:src/hello.txt')).toBe('hello');
    expect(git('show', 'epic/greetings:src/bye.txt')).toBe('bye');
    const report = JSON.parse(
      await readFile(join(repo, '.git/epicflow/greetings/report.json'), 'utf8'),
    ) as { stories: { id: string; status: string }[] };
    expect(report.stories.map((s) => [s.id, s.status])).toEqual([
      ['hello', 'done'],
      ['bye', 'done'],
    ]);
  });

  it('exports the probot App as epicflow/app', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const m = await import('epicflow/app'); console.log(typeof m.default, typeof m.createEpicflowApp);",
      ],
      { cwd: consumer, env: cleanEnv() },
    );
    expect(stdout).toBe('function function\n');
  });
});
