/**
 * The facts `epicflow doctor` and the start of `epicflow run` judge (`core/doctor`):
 * each executor's unset `${VAR}` keys and whether its CLI is on PATH, which lockfiles the
 * repository commits, and where an epic branch would start. Reads only; creates nothing.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Git } from '../../adapters/git/index.js';
import { referencedVariables } from '../../core/config/index.js';
import type { EpicflowConfig, ExecutorConfig } from '../../core/config/types.js';
import { diagnose, type Diagnosis, type ExecutorFacts } from '../../core/doctor/index.js';
import { CLI_HARNESSES, isCliHarness } from '../../core/harness/index.js';
import { commandFolder, MANAGER_LOCKFILES } from '../../core/init/index.js';
import { neededPrograms, needsNode, nodeRequirements } from '../../core/doctor/toolchains.js';
import { locate, notOnPath, onPath } from '../../adapters/process/on-path.js';
import { baseEnv, runProcess } from '../../adapters/process/run-process.js';
import { readRootFiles } from '../../adapters/repo/root-files.js';

/** The toolchains the setup and gates call that are missing, and Node against what is asked. */
async function toolchainFacts(
  config: EpicflowConfig,
  env: NodeJS.ProcessEnv,
  root: string,
): Promise<Pick<Parameters<typeof diagnose>[0], 'missingPrograms' | 'node'>> {
  const needed = neededPrograms([
    ...(config.setup === undefined ? [] : [config.setup]),
    ...config.gates,
    // Each package's checks run in its folder: they call programs too.
    ...(config.packages ?? []).flatMap((p) => [
      ...(p.setup === undefined ? [] : [p.setup]),
      ...p.gates,
    ]),
  ]);
  const missingPrograms = await notOnPath(needed, env, root);
  if (!needsNode(needed)) return { missingPrograms };
  const requirements = nodeRequirements((await readRootFiles(root)).texts);
  if (requirements.length === 0) return { missingPrograms };
  const node = await locate('node', env, root);
  let version: string | undefined;
  if (node !== undefined) {
    const r = await runProcess([node, '--version'], {
      cwd: root,
      env: baseEnv(env),
      timeoutMs: 30_000,
    });
    if (r.exitCode === 0) version = r.stdout.trim();
  }
  return { missingPrograms, node: { version, requirements } };
}

async function executorFacts(
  e: ExecutorConfig,
  env: NodeJS.ProcessEnv,
  root: string,
): Promise<ExecutorFacts> {
  const vars = new Set(Object.values(e.env).flatMap(referencedVariables));
  const missingVars = [...vars].filter((v) => (env[v] ?? '') === '');
  let missingBinary: ExecutorFacts['missingBinary'];
  if (isCliHarness(e.harness)) {
    const cli = CLI_HARNESSES[e.harness];
    if (!(await onPath(cli.binary, env, root))) {
      missingBinary = { name: cli.binary, install: cli.install };
    }
  } else {
    const program = e.command?.[0];
    if (program !== undefined && !(await onPath(program, env, root))) {
      missingBinary = { name: program };
    }
  }
  return { id: e.id, missingVars, ...(missingBinary === undefined ? {} : { missingBinary }) };
}

async function gitOrUndefined(repo: Git, args: string[]): Promise<string | undefined> {
  try {
    const out = (await repo.read(`git ${args.join(' ')}`, args)).trim();
    return out === '' ? undefined : out;
  } catch {
    return undefined;
  }
}

interface DoctorInput {
  readonly repo: Git;
  readonly config: EpicflowConfig;
  readonly configFile: string;
  readonly env: NodeJS.ProcessEnv;
  readonly pinned?: readonly { readonly story: string; readonly executor: string }[];
  /** `epicflow run --concurrency`, when given. */
  readonly concurrency?: number | undefined;
  /** What detection could not decide about the config (`LocalConfig.detectionNotes`). */
  readonly detectionNotes?: readonly string[];
  /** The epic branch a run would use (its existence means the base is settled). */
  readonly epicBranch?: string | undefined;
}

/** Gathers the facts and judges them. */
export async function checkLocal(input: DoctorInput): Promise<Diagnosis> {
  const { repo, config, env } = input;
  const executors = await Promise.all(
    config.executors.map((e) => executorFacts(e, env, repo.root)),
  );
  // At the root, and in the folder setup changes into (`cd app && npm ci`).
  const setupDir = config.setup === undefined ? '.' : commandFolder(config.setup);
  const lockfiles = Object.values(MANAGER_LOCKFILES)
    .flat()
    .flatMap((f) => (setupDir === '.' ? [f] : [f, `${setupDir}/${f}`]));
  const hasCommits = (await repo.revParse('HEAD')) !== null;
  const committed = new Set(
    hasCommits
      ? ((await gitOrUndefined(repo, ['ls-tree', '--name-only', 'HEAD', '--', ...lockfiles])) ?? '')
          .split('\n')
          .filter((f) => f !== '')
      : [],
  );
  const present = new Set(lockfiles.filter((f) => existsSync(join(repo.root, f))));
  const current = await gitOrUndefined(repo, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
  const defaultBranch = (
    await gitOrUndefined(repo, ['symbolic-ref', '--quiet', 'refs/remotes/origin/HEAD'])
  )?.replace(/^refs\/remotes\/origin\//, '');
  const epicBranchExists =
    input.epicBranch === undefined
      ? undefined
      : (await repo.revParse(`refs/heads/${input.epicBranch}`)) !== null;
  return diagnose({
    config,
    configFile: input.configFile,
    executors,
    ...(input.pinned === undefined ? {} : { pinned: input.pinned }),
    committed,
    present,
    ...(input.detectionNotes === undefined ? {} : { detectionNotes: input.detectionNotes }),
    ...(input.concurrency === undefined ? {} : { concurrency: input.concurrency }),
    ...(await toolchainFacts(config, env, repo.root)),
    base: { hasCommits, current, defaultBranch, epicBranchExists },
  });
}
