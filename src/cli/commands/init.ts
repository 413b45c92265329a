/**
 * `epicflow init [--app | --appless] [--executor ID]... [--dir REPO] [--force]`: writes the
 * story workflow (with `--appless` also the orchestrate workflow) and `.github/epicflow.yml`
 * into a repository, from the templates shipped in the package, with the Action at the
 * release tag of this version. Exit 0 written (or already so), 1 would overwrite (nothing
 * written, the files named) or a GitHub failure, 2 a usage error.
 *
 * With a token (`--token`, else `GITHUB_TOKEN`) it also makes sure the `epic` label exists
 * on the repository (`--github-repo OWNER/NAME`, else the `origin` remote's).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { GitRunner } from '../../adapters/git/run-git.js';
import { readRootFiles } from '../../adapters/repo/root-files.js';
import { readPackageFiles } from '../../adapters/repo/package-files.js';
import { treeDetectionFiles } from '../../adapters/repo/detection-files.js';
import { createOctokit, ensureLabel } from '../../adapters/github/index.js';
import { DEFAULT_CONFIG } from '../../core/config/index.js';
import { describeError, EpicflowError, isEpicflowError } from '../../core/errors.js';
import {
  adaptWorkflow,
  appFolder,
  choosePresets,
  CONFIG_TARGET,
  detectionPaths,
  detectPackages,
  initDefaults,
  nextSteps,
  nodeVersionFile,
  releaseRef,
  runnerSteps,
  renderConfig,
  WORKFLOW_TEMPLATES,
  type InitMode,
  type RepoFacts,
} from '../../core/init/index.js';
import { EXIT_FAILED, EXIT_OK, type CliContext } from '../context.js';

/** The package's root: the same relative path from src/cli/commands and lib/cli/commands. */
const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface InitOptions {
  readonly app?: boolean;
  readonly appless?: boolean;
  readonly executor: string[];
  readonly dir?: string;
  readonly force?: boolean;
  readonly token?: string;
  readonly githubRepo?: string;
  readonly apiUrl?: string;
}

const LABEL_COLOR = '5319e7';
const LABEL_DESCRIPTION = 'An epic: epicflow delivers its plan story by story';

async function packageVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

async function template(path: string): Promise<string> {
  try {
    return await readFile(join(PACKAGE_ROOT, path), 'utf8');
  } catch (e) {
    throw new EpicflowError('internal', `the epicflow package has no ${path}`, { cause: e });
  }
}

/** `owner/name` of the repository's `origin` remote (https, ssh or scp-like URL), or undefined. */
async function originRepo(dir: string): Promise<string | undefined> {
  const url = await gitLine(dir, ['remote', 'get-url', 'origin']);
  if (url === undefined) return undefined;
  const m = /[:/]([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?\/?$/.exec(url);
  return m ? `${m[1]}/${m[2]}` : undefined;
}

/**
 * The output of a git command in `dir` (the repository found from it), run as epicflow
 * runs git; undefined when it fails or git cannot run.
 */
async function gitLine(dir: string, args: readonly string[]): Promise<string | undefined> {
  try {
    const r = await new GitRunner(dir, undefined).try(args);
    return r.exitCode === 0 ? r.stdout.trim() : undefined;
  } catch (e) {
    if (isEpicflowError(e, 'git')) return undefined;
    throw e;
  }
}

/** What init's defaults are decided from: the root's files (and its test files), the branches. */
async function repoFacts(dir: string, repoPaths: readonly string[]): Promise<RepoFacts> {
  const root = await readRootFiles(dir);
  const texts = root.texts;
  const paths = [...root.paths, ...detectionPaths(repoPaths).filter((p) => p.includes('/'))];
  const isGitRepo = (await gitLine(dir, ['rev-parse', '--git-dir'])) !== undefined;
  const originHead = isGitRepo
    ? (await gitLine(dir, ['symbolic-ref', '--quiet', 'refs/remotes/origin/HEAD']))?.replace(
        /^refs\/remotes\/origin\//,
        '',
      )
    : undefined;
  const currentBranch = isGitRepo
    ? await gitLine(dir, ['symbolic-ref', '--quiet', '--short', 'HEAD'])
    : undefined;
  const hasOrigin =
    isGitRepo && (await gitLine(dir, ['remote', 'get-url', 'origin'])) !== undefined;
  return { paths, texts, isGitRepo, hasOrigin, originHead, currentBranch };
}

function modeOf(o: InitOptions): InitMode {
  if (o.app === true && o.appless === true) {
    throw new EpicflowError('usage', '--app and --appless exclude each other');
  }
  return o.appless === true ? 'appless' : 'app';
}

async function initCommand(o: InitOptions, ctx: CliContext): Promise<number> {
  const { io } = ctx;
  const env = io.env ?? process.env;
  const mode = modeOf(o);
  const presets = choosePresets(o.executor);
  const dir = resolve(io.cwd, o.dir ?? '.');
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new EpicflowError('usage', `not a directory: ${dir}`, {
      details: ['--dir names the repository to write into'],
    });
  }
  const token = o.token ?? env['GITHUB_TOKEN'];
  let githubRepo: { owner: string; repo: string } | undefined;
  if (token !== undefined && token !== '') {
    const name = o.githubRepo ?? (await originRepo(dir));
    const m = name === undefined ? null : /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/.exec(name);
    if (!m?.[1] || !m[2]) {
      throw new EpicflowError(
        'usage',
        name === undefined
          ? `cannot tell which GitHub repository ${dir} is (no origin remote)`
          : `--github-repo must be OWNER/NAME, got ${JSON.stringify(name)}`,
        {
          details: [
            'pass --github-repo OWNER/NAME, or leave out the token to create the label yourself',
          ],
        },
      );
    }
    githubRepo = { owner: m[1], repo: m[2] };
  }

  const version = await packageVersion();
  const ref = releaseRef(version);
  const repoFiles = await readPackageFiles(dir);
  const facts = await repoFacts(dir, repoFiles.paths);
  const tree = await treeDetectionFiles(dir);
  // A root that is no project, with its app in one folder: the root's checks run there.
  const app = appFolder(tree.paths, tree.texts);
  const defaults = initDefaults(facts, app.found);
  const detected = detectPackages(repoFiles.paths, repoFiles.texts);
  const found = {
    ...detected,
    packages: detected.packages.filter((p) => p.path !== app.found?.dir),
  };
  const runner = {
    steps: runnerSteps([...new Set([...defaults.toolchains, ...found.toolchains])], facts.texts),
    nodeVersionFile: nodeVersionFile(facts.paths),
  };
  const files: { path: string; text: string }[] = [];
  for (const t of WORKFLOW_TEMPLATES[mode]) {
    files.push({
      path: t.target,
      text: adaptWorkflow(t.template, await template(t.template), {
        presets,
        ref,
        branch: defaults.branch,
        runner,
      }),
    });
  }
  files.push({
    path: CONFIG_TARGET,
    text: renderConfig({
      presets,
      setup:
        defaults.setup === undefined
          ? undefined
          : { command: defaults.setup, from: defaults.setupFrom.map((s) => s.from).join(', ') },
      gates: defaults.gates,
      packages: found.packages,
      version,
    }),
  });

  const state = files.map((f) => {
    const target = join(dir, f.path);
    if (!existsSync(target)) return { ...f, target, action: 'wrote' as const };
    const same = statSync(target).isFile() && readFileSync(target, 'utf8') === f.text;
    return { ...f, target, action: same ? ('unchanged' as const) : ('replaced' as const) };
  });
  const conflicts = state.filter((f) => f.action === 'replaced');
  if (conflicts.length > 0 && o.force !== true) {
    io.stderr(
      `error: would overwrite ${conflicts.map((f) => f.path).join(', ')} in ${dir}\n` +
        '  nothing was written; pass --force to replace them\n',
    );
    return EXIT_FAILED;
  }

  const label = DEFAULT_CONFIG.labels.epic;
  let labelOutcome: { repo: string; action: 'created' | 'unchanged' } | undefined;
  if (githubRepo !== undefined && token !== undefined) {
    const octokit = createOctokit({
      token,
      baseUrl: o.apiUrl ?? env['GITHUB_API_URL'] ?? 'https://api.github.com',
      production: true,
    });
    try {
      const action = await ensureLabel(octokit, {
        ...githubRepo,
        name: label,
        color: LABEL_COLOR,
        description: LABEL_DESCRIPTION,
      });
      labelOutcome = { repo: `${githubRepo.owner}/${githubRepo.repo}`, action };
    } catch (e) {
      io.stderr(`error: ${describeError(e)}\n  nothing was written\n`);
      return EXIT_FAILED;
    }
  }

  for (const f of state) {
    if (f.action === 'unchanged') continue;
    await mkdir(dirname(f.target), { recursive: true });
    await writeFile(f.target, f.text);
  }
  for (const f of state) io.stdout(`${f.action.padEnd(9)} ${f.path}\n`);
  for (const w of [...defaults.warnings, ...app.warnings, ...found.warnings])
    io.stderr(`warning: ${w}\n`);
  io.stdout(
    nextSteps({ mode, presets, label, ...(labelOutcome === undefined ? {} : { labelOutcome }) }),
  );
  return EXIT_OK;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function registerInitCommand(program: Command, ctx: CliContext): void {
  program
    .command('init')
    .description('write the epicflow workflows and .github/epicflow.yml into a repository')
    .option('--app', 'the epicflow App decides what runs (default): the story workflow only')
    .option('--appless', 'no App: also the orchestrate workflow, which decides in Actions')
    .option(
      '--executor <id>',
      'an agent for the roster: codex, claude, gemini, opencode or aider; repeat for more (default: codex and claude)',
      collect,
      [],
    )
    .option('--dir <repo>', 'the repository to write into (default: the current directory)')
    .option('--force', 'replace files that exist and differ')
    .option('--token <token>', 'a GitHub token, to create the epic label (default: GITHUB_TOKEN)')
    .option('--github-repo <owner/name>', 'the repository on GitHub (default: the origin remote)')
    .option('--api-url <url>', 'the GitHub API (default: GITHUB_API_URL, else api.github.com)')
    .action(async (o: InitOptions) => {
      ctx.setExitCode(await initCommand(o, ctx));
    });
}
