/**
 * The configuration of a local command (`epicflow run`, `epicflow land`), read and checked
 * before anything is created: the file (found, or `--config FILE`), at least
 * one coder, the config paths no agent may change, and each executor's
 * environment with its `${VAR}` secrets resolved.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { CONFIG_LOCATIONS, loadConfig } from '../../adapters/config/load-config.js';
import { requireCoder, type EpicflowConfig } from '../../core/config/index.js';
import { userRosterPath } from '../../core/config/user-roster.js';
import { EpicflowError, isEpicflowError } from '../../core/errors.js';
import { Git } from '../../adapters/git/index.js';
import { planOptionsFor } from '../../core/plan/index.js';
import type { PlanOptions } from '../../core/plan/types.js';
import { resolveExecutorEnvs } from '../../composition/epic.js';

export interface LocalConfig {
  readonly config: EpicflowConfig;
  /** The file it was read from (absolute). */
  readonly file: string;
  /** The file relative to the repository root, for messages (absolute when outside it). */
  readonly shownFile: string;
  /** The plan validator's options: the config files agents may never change, workflows. */
  readonly planOptions: Required<PlanOptions>;
  /** Config files agents may never change (relative to the repository root). */
  readonly configPaths: readonly string[];
  /** Resolved environment per executor id. */
  readonly executorEnv: Record<string, Record<string, string>>;
  /** What detection could not decide about the gates the config leaves out. */
  readonly detectionNotes: readonly string[];
}

export async function loadLocalConfig(input: {
  readonly root: string;
  /** `--config FILE` as given, resolved against `cwd`. */
  readonly config?: string | undefined;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /**
   * Leave the executors' `${VAR}` unresolved (`executorEnv` empty): the caller checks them
   * all at once (`local-doctor.ts`) and resolves those it keeps.
   */
  readonly deferEnv?: boolean;
  /** What the command needs of the executors: a coder (the default), or a planner (checked by the caller). */
  readonly role?: 'coder' | 'planner';
}): Promise<LocalConfig> {
  const configFile = input.config === undefined ? undefined : resolve(input.cwd, input.config);
  if (configFile !== undefined && !existsSync(configFile)) {
    throw new EpicflowError('config', `config file not found: ${input.config ?? ''}`);
  }
  const loaded = await loadConfig({
    repoDir: input.root,
    userRoster: userRosterPath(input.env),
    ...(configFile === undefined ? {} : { configFile }),
  });
  if (loaded.file === null) {
    throw new EpicflowError('config', `no epicflow config found in ${input.root}`, {
      details: [
        `create ${CONFIG_LOCATIONS.join(' or ')} with ${input.role === 'planner' ? 'an executor that has the planner role' : 'at least one executor'}, or pass --config FILE`,
      ],
    });
  }
  const { config } = loaded;
  if (input.role !== 'planner') requireCoder(config, loaded.file);
  const inRepo = relative(input.root, loaded.file);
  const inside = !inRepo.startsWith('..') && !isAbsolute(inRepo);
  const planOptions = planOptionsFor(config, inside ? inRepo.split(sep).join('/') : undefined);
  const executorEnv =
    input.deferEnv === true ? {} : resolveExecutorEnvs(config.executors, input.env);
  return {
    config,
    file: loaded.file,
    shownFile: inside ? inRepo : loaded.file,
    planOptions,
    configPaths: planOptions.configPaths,
    executorEnv,
    detectionNotes: loaded.detectionNotes,
  };
}

/** The repository a local command works on; not one is a usage error naming `--repo`. */
export async function openRepo(dir: string): Promise<Git> {
  try {
    return await Git.open(dir);
  } catch (e) {
    if (isEpicflowError(e, 'git')) {
      throw new EpicflowError('usage', `not a git repository: ${dir}`, {
        details: ['run epicflow inside a git repository, or pass --repo DIR'],
      });
    }
    throw e;
  }
}

/** A plan or epic file named on the command line (`shown` as the user wrote it). */
export async function readInputFile(
  path: string,
  shown: string,
  what: 'plan' | 'epic',
): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new EpicflowError(
      'usage',
      code === 'ENOENT'
        ? `${what} file not found: ${shown}`
        : `cannot read ${what} file ${shown}: ${(e as Error).message}`,
    );
  }
}
