#!/usr/bin/env node
// The release layout `uses: owner/epicflow@v1` needs, built and checked: action.yml at the
// root and the bundle it names (runs.main) beside it, running on its own with nothing else
// installed. The release workflow runs it on the checkout before it commits dist/; npm test
// runs it too (test/release/release-verify.test.ts), into a temporary folder.
//
// Usage: node scripts/release-verify.mjs [DIR]     build DIR/dist (default: this repository),
//                                                  copy action.yml there, then check DIR
//        node scripts/release-verify.mjs --check DIR   only check an existing layout
//
// The check copies DIR's action.yml and the folder of runs.main into an empty temporary
// folder (no node_modules anywhere above it), runs runs.main with the environment a runner
// gives a step with bad inputs, and expects exit 1 with the Action's input error in its log
// and its job summary. Exit 0 when the layout is good, 1 with the reasons otherwise.
import { execFile } from 'node:child_process';
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import YAML from 'yaml';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);

/** The runtimes a GitHub-hosted runner runs JavaScript actions with. */
const RUNTIMES = ['node20', 'node24'];

async function exists(path) {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Problems of the layout in `dir`, as sentences; empty when `uses:` would work. */
export async function checkLayout(dir) {
  const problems = [];
  const actionFile = join(dir, 'action.yml');
  if (!(await exists(actionFile))) return [`no action.yml in ${dir}`];
  const action = YAML.parse(await readFile(actionFile, 'utf8')) ?? {};
  const using = action.runs?.using;
  const main = action.runs?.main;
  if (!RUNTIMES.includes(using))
    problems.push(
      `action.yml runs.using is ${JSON.stringify(using)}, expected one of ${RUNTIMES.join(', ')}`,
    );
  if (
    typeof main !== 'string' ||
    main === '' ||
    isAbsolute(main) ||
    main.split(/[\\/]/).includes('..')
  ) {
    problems.push(
      `action.yml runs.main must be a path inside the action, got ${JSON.stringify(main)}`,
    );
    return problems;
  }
  if (!(await exists(join(dir, main)))) {
    problems.push(`action.yml runs.main ${main}: no such file in ${dir}`);
    return problems;
  }
  const bundleDir = dirname(main);
  if (bundleDir === '.') {
    problems.push(`action.yml runs.main ${main} must be in a folder of its own (dist/)`);
    return problems;
  }
  if (main.endsWith('.js')) {
    const pkgFile = join(dir, bundleDir, 'package.json');
    const type = (await exists(pkgFile))
      ? JSON.parse(await readFile(pkgFile, 'utf8')).type
      : undefined;
    if (type !== 'module')
      problems.push(
        `${join(bundleDir, 'package.json')} must say "type": "module" (the bundle is ESM)`,
      );
  }
  if (problems.length > 0) return problems;

  // Alone: only action.yml and the bundle's folder, far from any node_modules.
  const alone = await mkdtemp(join(tmpdir(), 'epicflow-release-'));
  try {
    await copyFile(actionFile, join(alone, 'action.yml'));
    await cp(join(dir, bundleDir), join(alone, bundleDir), { recursive: true });
    const summary = join(alone, 'summary.md');
    const output = join(alone, 'output.txt');
    await writeFile(summary, '');
    await writeFile(output, '');
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: alone,
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: alone,
      RUNNER_TEMP: alone,
      GITHUB_STEP_SUMMARY: summary,
      GITHUB_OUTPUT: output,
      GITHUB_REPOSITORY: 'acme/shop',
      GITHUB_EVENT_NAME: 'workflow_dispatch',
      // Story mode without its ids: the Action must refuse before it reaches GitHub.
      INPUT_MODE: 'story',
      'INPUT_GITHUB-TOKEN': 'ghs_release_verify_not_a_token',
      INPUT_CONFIG: '.github/epicflow.yml',
    };
    let code = 0;
    let log = '';
    try {
      const r = await run(process.execPath, [join(alone, main)], {
        cwd: alone,
        env,
        timeout: 60_000,
      });
      log = r.stdout + r.stderr;
    } catch (e) {
      code = typeof e.code === 'number' ? e.code : -1;
      log = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    }
    const summaryText = await readFile(summary, 'utf8');
    if (code !== 1) {
      problems.push(
        `${main} with bad inputs exited ${code}, expected 1:\n${log.trim().split('\n').slice(-15).join('\n')}`,
      );
    } else if (!log.includes('::error::invalid inputs of the epicflow action')) {
      problems.push(
        `${main} with bad inputs did not log the input error:\n${log.trim().split('\n').slice(-15).join('\n')}`,
      );
    } else if (!summaryText.includes('input "epic" is required in story mode')) {
      problems.push(
        `${main} with bad inputs did not name the missing input in the job summary:\n${summaryText}`,
      );
    }
  } finally {
    await rm(alone, { recursive: true, force: true });
  }
  return problems;
}

/** Builds the release layout into `dir`: the bundle in dir/dist, action.yml beside it. */
async function buildLayout(dir) {
  await mkdir(dir, { recursive: true });
  await run(process.execPath, [join(root, 'scripts/build-action.mjs'), join(dir, 'dist')], {
    cwd: root,
  });
  if (resolve(dir) !== root) await copyFile(join(root, 'action.yml'), join(dir, 'action.yml'));
}

async function cli() {
  const { values, positionals } = parseArgs({
    options: { check: { type: 'boolean', default: false } },
    allowPositionals: true,
  });
  if (positionals.length > 1) {
    console.error('usage: node scripts/release-verify.mjs [--check] [DIR]');
    return 2;
  }
  const dir = resolve(positionals[0] ?? root);
  if (!values.check) await buildLayout(dir);
  const problems = await checkLayout(dir);
  const near = relative(process.cwd(), dir);
  const shown = near === '' ? '.' : near.startsWith('..') ? dir : near;
  if (problems.length > 0) {
    console.error(`release layout in ${shown} is not usable:`);
    for (const p of problems) console.error(`  ${p.split('\n').join('\n    ')}`);
    return 1;
  }
  const action = YAML.parse(await readFile(join(dir, 'action.yml'), 'utf8'));
  const bytes = (await stat(join(dir, action.runs.main))).size;
  console.log(
    `release layout ok in ${shown}: action.yml runs ${action.runs.using} ${action.runs.main} ` +
      `(${Math.round(bytes / 1024)} KiB), which runs alone and refuses bad inputs with exit 1`,
  );
  return 0;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await cli();
}
