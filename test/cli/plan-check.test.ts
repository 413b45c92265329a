import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { main } from '../../src/cli/program.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

const VALID = `# Health

\`\`\`epicflow
stories:
  - id: health-endpoint
    title: Add a health endpoint
    description: Serve GET /health.
    owns: [src/health.ts]
  - id: wire-health
    title: Register the health route
    description: Mount the handler.
    dependsOn: [health-endpoint]
    owns: [src/server.ts]
  - id: docs
    title: Document it
    description: Write the docs.
    owns: [docs/health.md]
\`\`\`
`;

const INVALID = `\`\`\`epicflow
stories:
  - id: a
    title: A
    description: d
    owns: [src]
    dependsOn: [b]
  - id: b
    title: B
    description: d
    owns: [src/b]
    dependsOn: [a]
    colour: blue
\`\`\`
`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let dir: string;

async function run(argv: string[], stdin = ''): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
    readStdin: async () => stdin,
    cwd: dir,
  });
  return { code, stdout, stderr };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'epicflow-cli-'));
  await writeFile(join(dir, 'valid.md'), VALID);
  await writeFile(join(dir, 'invalid.md'), INVALID);
  await mkdir(join(dir, 'plans'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('epicflow plan check', () => {
  it('prints the summary of a valid plan and exits 0', async () => {
    expect(await run(['plan', 'check', 'valid.md'])).toEqual({
      code: 0,
      stdout: 'valid: 3 stories in 2 waves\n',
      stderr: '',
    });
  });

  it('accepts an absolute path', async () => {
    const result = await run(['plan', 'check', join(dir, 'valid.md')]);
    expect(result.code).toBe(0);
  });

  it('prints one line per violation and exits 1', async () => {
    expect(await run(['plan', 'check', 'invalid.md'])).toEqual({
      code: 1,
      stdout: [
        'schema: story "b": unknown field "colour"',
        'cycle: a -> b -> a',
        'owns-overlap: stories "a" and "b" own overlapping paths "src" and "src/b"',
        '',
      ].join('\n'),
      stderr: '',
    });
  });

  it('prints JSON for a valid plan', async () => {
    const result = await run(['plan', 'check', '--json', 'valid.md']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      '{"valid":true,"stories":3,"waves":[["health-endpoint","docs"],["wire-health"]],"violations":[]}\n',
    );
  });

  it('prints JSON for an invalid plan', async () => {
    const result = await run(['plan', 'check', 'invalid.md', '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      valid: false,
      stories: 2,
      waves: [],
      violations: [
        { code: 'schema', message: 'story "b": unknown field "colour"' },
        { code: 'cycle', message: 'a -> b -> a' },
        {
          code: 'owns-overlap',
          message: 'stories "a" and "b" own overlapping paths "src" and "src/b"',
        },
      ],
    });
  });

  it('reads the plan from stdin for -', async () => {
    expect(await run(['plan', 'check', '-'], VALID)).toMatchObject({
      code: 0,
      stdout: 'valid: 3 stories in 2 waves\n',
    });
    expect(await run(['plan', 'check', '-'], 'no plan here')).toEqual({
      code: 1,
      stdout:
        'no-plan-block: no ```epicflow block found: put the plan in a fenced code block whose info string is epicflow\n',
      stderr: '',
    });
  });

  it('exits 2 with a clear message for a missing file', async () => {
    expect(await run(['plan', 'check', 'missing.md'])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error: cannot read "missing.md": no such file\n',
    });
  });

  it('exits 2 for a directory', async () => {
    expect(await run(['plan', 'check', 'plans'])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error: cannot read "plans": it is a directory\n',
    });
  });

  it.each([
    [['plan', 'check', '--jsn', 'valid.md'], "error: unknown option '--jsn'"],
    [['plan', 'check'], "error: missing required argument 'file'"],
    [['plan', 'check', 'valid.md', 'extra.md'], 'error: too many arguments'],
    [['plan', 'frobnicate'], "error: unknown command 'frobnicate'"],
    [['deploy'], "error: unknown command 'deploy'"],
  ])('exits 2 on the usage error %j', async (argv, message) => {
    const result = await run(argv);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(message);
  });

  it('exits 2 and shows help when no command is given', async () => {
    const result = await run([]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Usage: epicflow');
  });
});

describe('epicflow --help and --version', () => {
  it('prints the package version', async () => {
    const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(await run(['--version'])).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });

  it('prints help listing the commands', async () => {
    const result = await run(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: epicflow');
    expect(result.stdout).toContain('plan');
    const check = await run(['plan', 'check', '--help']);
    expect(check.code).toBe(0);
    expect(check.stdout).toContain('Usage: epicflow plan check [options] <file>');
    expect(check.stdout).toContain('--json');
  });
});

describe('the real entry point', () => {
  it('runs as a process with the exit code of the check', async () => {
    const result = await execa(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'plan', 'check', join(dir, 'invalid.md')],
      { cwd: repoRoot, reject: false },
    );
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe(
      [
        'schema: story "b": unknown field "colour"',
        'cycle: a -> b -> a',
        'owns-overlap: stories "a" and "b" own overlapping paths "src" and "src/b"',
      ].join('\n'),
    );
    expect(result.stderr).toBe('');
  });
});
