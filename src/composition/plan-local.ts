/**
 * The local composition root of `epicflow plan draft`: reads the epic's prose
 * and the config, checks everything before running anything, wires a detached
 * worktree at HEAD, the executor adapters and an in-memory roster of planners
 * into the planning use case, and writes the prose followed by the plan
 * section to the output file — only a plan that parses as it is written.
 */
import { planningGit } from './planning-tree.js';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { CONFIG_LOCATIONS, loadConfig } from '../adapters/config/load-config.js';
import type { ExecutorDeps } from '../adapters/executors/index.js';
import { requirePlanner } from '../core/config/coders.js';
import { EpicflowError } from '../core/errors.js';
import type { Plan } from '../core/model.js';
import {
  extractPlanBlocks,
  parsePlan,
  planOptionsFor,
  samePlanEntries,
} from '../core/plan/index.js';
import {
  proseOf,
  renderPlanSection,
  splitPlanSection,
  withPlanSection,
} from '../core/planner/index.js';
import { emptyRosterState } from '../core/roster/index.js';
import { planEpic, plannerRoster, type PlanningOutcome } from '../engine/plan-epic.js';
import { executorLookup, resolveExecutorEnvs } from './epic.js';
import { openRepo, readInputFile } from './local-config.js';

export interface LocalDraftOptions {
  /** The epic's markdown file (its prose; a plan section in it is re-planned). */
  readonly file: string;
  /** Default: `<EPIC>.plan.md` next to the epic file. */
  readonly out?: string | undefined;
  readonly repo?: string | undefined;
  readonly config?: string | undefined;
}

interface LocalDraftHooks {
  /** Where relative paths are resolved. */
  readonly cwd: string;
  /** The environment executors' `${VAR}` come from and children start from. */
  readonly env: NodeJS.ProcessEnv;
  /** One line per planning step. */
  readonly onEvent: (message: string) => void;
  readonly interrupt?: AbortSignal | undefined;
  /** How the executor adapters run their CLIs (binaries, model API base URLs). */
  readonly executorDeps?: Omit<ExecutorDeps, 'sourceEnv' | 'prices'> | undefined;
}

export interface LocalDraftResult {
  readonly outcome: PlanningOutcome;
  /** The output file (absolute). */
  readonly out: string;
  /** The output file as the user named it (for messages). */
  readonly shownOut: string;
  /** Set when the plan was written. */
  readonly written: boolean;
}

/** `<EPIC>.plan.md` next to the epic file. */
export function defaultOutFile(file: string): string {
  const ext = extname(file);
  return `${ext === '' ? file : file.slice(0, -ext.length)}.plan.md`;
}

/** The prose's first markdown heading, for the prompt's title. */
function titleOf(markdown: string): string | undefined {
  return /^#\s+(.+)$/m.exec(markdown)?.[1]?.trim();
}

/** A file name as an epic id (`EPICFLOW_EPIC`, folder names): letters, digits, `.`, `_`, `-`. */
function epicIdOf(file: string): string {
  const id = basename(file, extname(file))
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[-.]+/, '')
    .slice(0, 64);
  return id === '' ? 'epic' : id;
}

/** Writes through a temporary file and a rename: the output is whole or untouched. */
async function writeWhole(path: string, text: string): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${randomUUID().slice(0, 8)}.tmp`);
  try {
    await writeFile(tmp, text, 'utf8');
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw new EpicflowError('usage', `cannot write ${path}: ${(e as Error).message}`, { cause: e });
  }
}

/** Runs the planner on the epic's prose; writes the plan only when it is valid. */
export async function draftPlanLocally(
  options: LocalDraftOptions,
  hooks: LocalDraftHooks,
): Promise<LocalDraftResult> {
  const repo = await openRepo(resolve(hooks.cwd, options.repo ?? '.'));
  const epicPath = resolve(hooks.cwd, options.file);
  const markdown = await readInputFile(epicPath, options.file, 'epic');
  const shownOut = options.out ?? defaultOutFile(options.file);
  const out = resolve(hooks.cwd, shownOut);

  const configFile = options.config === undefined ? undefined : resolve(hooks.cwd, options.config);
  if (configFile !== undefined && !existsSync(configFile)) {
    throw new EpicflowError('config', `config file not found: ${options.config ?? ''}`);
  }
  const loaded = await loadConfig({
    repoDir: repo.root,
    ...(configFile === undefined ? {} : { configFile }),
  });
  if (loaded.file === null) {
    throw new EpicflowError('config', `no epicflow config found in ${repo.root}`, {
      details: [
        `create ${CONFIG_LOCATIONS.join(' or ')} with an executor that has the planner role, or pass --config FILE`,
      ],
    });
  }
  const inRepo = relative(repo.root, loaded.file);
  const insideRepo = !inRepo.startsWith('..') && !isAbsolute(inRepo);
  const shownConfig = insideRepo ? inRepo.split(sep).join('/') : loaded.file;
  const config = loaded.config;
  const planners = requirePlanner(config, shownConfig);
  const planOptions = planOptionsFor(config, insideRepo ? shownConfig : undefined);

  // A plan section from an earlier draft is re-planned (its ids kept); a block outside it is not prose.
  const split = splitPlanSection(markdown);
  const prose = proseOf(markdown);
  if (extractPlanBlocks(prose).length > 0) {
    throw new EpicflowError('usage', `${options.file} already holds a plan block`, {
      details: [
        `run it with: epicflow run ${options.file}`,
        'plan draft turns prose into a plan: remove the ```epicflow block to draft one',
      ],
    });
  }
  if (prose.trim() === '') {
    throw new EpicflowError('usage', `${options.file} has no text to plan from`, {
      details: ['describe the epic in prose: what to build, for whom, what done looks like'],
    });
  }
  let previous: Plan | undefined;
  if (split.section !== undefined) {
    const parsed = parsePlan(split.section, planOptions);
    if (parsed.ok) previous = parsed.plan;
  }

  const executorEnv = resolveExecutorEnvs(planners, hooks.env);
  const base = await repo.defaultBase();
  const epic = epicIdOf(options.file);
  const planningDir = join(
    repo.gitDir,
    'epicflow',
    'planning',
    `${epic}-${randomUUID().slice(0, 8)}`,
  );
  const treePath = join(planningDir, 'tree');
  const clock = { now: () => new Date() };

  let outcome: PlanningOutcome;
  try {
    outcome = await planEpic(
      {
        epic,
        title: titleOf(prose),
        epicText: prose,
        base,
        config,
        configPaths: planOptions.configPaths,
        executorEnv,
        home: (id) => join(planningDir, 'homes', id),
        previous,
      },
      {
        git: planningGit(repo, treePath),
        executors: executorLookup({ config, env: hooks.env, deps: hooks.executorDeps }),
        roster: plannerRoster(planners, clock, emptyRosterState()),
        emit: hooks.onEvent,
        signal: hooks.interrupt,
      },
    );
  } finally {
    await rm(planningDir, { recursive: true, force: true });
  }

  if (outcome.kind !== 'planned') return { outcome, out, shownOut, written: false };
  const section = renderPlanSection({
    plan: outcome.plan,
    warnings: outcome.warnings,
    note: `Drafted by epicflow's planner from the text above: check it, edit it if needed, then run it with \`epicflow run ${basename(shownOut)}\`.`,
  });
  const document = withPlanSection(markdown, section);
  // Never write a plan that does not read back as the one validated.
  const check = parsePlan(document, planOptions);
  if (!check.ok || !samePlanEntries(check.plan, outcome.plan)) {
    throw new EpicflowError('internal', `the drafted plan does not read back as validated`, {
      details: check.ok ? [] : check.violations.map((v) => `${v.code}: ${v.message}`),
    });
  }
  await mkdir(dirname(out), { recursive: true });
  await writeWhole(out, document);
  return { outcome, out, shownOut, written: true };
}
