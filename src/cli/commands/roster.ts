/**
 * `epicflow roster [--repo DIR] [--config FILE] [--epic ID]`: each executor of
 * the config with its harness, model, roles, slots, priority and exclusion.
 * `epicflow roster pause <id>` / `resume <id>` write a manual exclusion into
 * the epic's `roster.json`, which every run reads (a running one at its next
 * lease).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { Git } from '../../adapters/git/index.js';
import { loadConfig } from '../../adapters/config/load-config.js';
import { openRepo } from './epic-folder.js';
import { FileStateStore } from '../../adapters/state/file-store.js';
import type { EpicflowConfig } from '../../core/config/types.js';
import { userRosterPath } from '../../core/config/user-roster.js';
import { EpicflowError } from '../../core/errors.js';
import {
  emptyRosterState,
  loadRosterState,
  pauseExecutor,
  resumeExecutor,
  type RosterState,
} from '../../core/roster/index.js';
import { renderRoster, type BusyCounts } from '../../core/roster/render.js';
import { checkEpicId, epicStateDir, localEpics } from '../../jobs/local/local-epics.js';
import { EXIT_OK, type CliContext } from '../context.js';

type Env = Readonly<Record<string, string | undefined>>;

interface RosterOptions {
  readonly repo?: string;
  readonly config?: string;
  readonly epic?: string;
}

interface RosterSetup {
  readonly config: EpicflowConfig;
  readonly configFile: string;
  readonly repo: Git;
  readonly epics: string[];
}

async function setUp(opts: RosterOptions, cwd: string, env: Env): Promise<RosterSetup> {
  const repo = await openRepo(cwd, opts.repo);
  const loaded = await loadConfig({
    repoDir: repo.root,
    userRoster: userRosterPath(env),
    ...(opts.config === undefined ? {} : { configFile: resolve(cwd, opts.config) }),
  });
  if (loaded.file === null) {
    throw new EpicflowError('config', `no epicflow config found in ${repo.root}`, {
      details: ['pass --config FILE'],
    });
  }
  if (opts.epic !== undefined) checkEpicId(opts.epic, '--epic');
  const epics = await localEpics(repo);
  return { config: loaded.config, configFile: loaded.file, repo, epics };
}

async function readRoster(store: FileStateStore): Promise<RosterState> {
  return loadRosterState(
    await store.readJson<unknown>('roster.json'),
    join(store.dir, 'roster.json'),
  );
}

/** Coder seats held by running stories: only meaningful while a run holds the epic's lock. */
async function busyCounts(store: FileStateStore): Promise<BusyCounts> {
  if (!existsSync(join(store.dir, 'lock'))) return {};
  const busy: Record<string, number> = {};
  for (const r of await store.listStories()) {
    const id = r.executors[r.executors.length - 1];
    if (r.status === 'active' && id !== undefined) busy[id] = (busy[id] ?? 0) + 1;
  }
  return busy;
}

function checkExecutor(setup: RosterSetup, id: string): void {
  if (setup.config.executors.some((e) => e.id === id)) return;
  throw new EpicflowError('usage', `unknown executor "${id}" in ${setup.configFile}`, {
    details: [`known executors: ${setup.config.executors.map((e) => e.id).join(', ')}`],
  });
}

async function list(
  opts: RosterOptions,
  out: (s: string) => void,
  cwd: string,
  env: Env,
): Promise<void> {
  const setup = await setUp(opts, cwd, env);
  let epic = opts.epic;
  if (epic === undefined && setup.epics.length > 1) {
    out(`epics in this repository: ${setup.epics.join(', ')} (pick one with --epic ID)\n`);
    return;
  }
  epic ??= setup.epics[0];
  const store = epic === undefined ? null : new FileStateStore(epicStateDir(setup.repo, epic));
  const state = store === null ? emptyRosterState() : await readRoster(store);
  const busy = store === null ? {} : await busyCounts(store);
  out(renderRoster(setup.config.executors, state, new Date(), busy));
}

async function setPause(
  opts: RosterOptions,
  id: string,
  pause: boolean,
  out: (s: string) => void,
  cwd: string,
  env: Env,
): Promise<void> {
  const setup = await setUp(opts, cwd, env);
  checkExecutor(setup, id);
  const epics = opts.epic === undefined ? setup.epics : [opts.epic];
  if (epics.length === 0) {
    throw new EpicflowError('usage', 'no epic has run in this repository yet', {
      details: ['pass --epic ID to name the epic whose roster to change'],
    });
  }
  for (const epic of epics) {
    const store = new FileStateStore(epicStateDir(setup.repo, epic));
    const state = await readRoster(store);
    const next = pause ? pauseExecutor(state, id, new Date()) : resumeExecutor(state, id);
    const { leases: _leases, ...persisted } = next;
    await store.writeJson('roster.json', persisted);
  }
  out(`${id} ${pause ? 'paused' : 'resumed'} for epic ${epics.join(', ')}\n`);
}

function addOptions(command: Command): Command {
  return command
    .option('--repo <dir>', 'the git repository (default: the current directory)')
    .option('--config <file>', 'config file (default: .github/epicflow.yml or epicflow.yml)')
    .option('--epic <id>', 'the epic (default: the only one; pause/resume: every epic)');
}

/** `epicflow roster`, `epicflow roster pause <id>`, `epicflow roster resume <id>`. */
export function registerRosterCommands(program: Command, ctx: CliContext): void {
  const out = (s: string): void => ctx.io.stdout(s);
  const env: Env = ctx.io.env ?? process.env;
  const guard = async (work: () => Promise<void>): Promise<void> => {
    await work();
    ctx.setExitCode(EXIT_OK);
  };
  const roster = addOptions(
    program
      .command('roster')
      .description("show each executor's slots and exclusion; pause or resume one"),
  ).action(async (o: RosterOptions) => guard(() => list(o, out, ctx.io.cwd, env)));
  addOptions(
    roster
      .command('pause')
      .description('take an executor out until `epicflow roster resume <id>`')
      .argument('<id>', 'executor id'),
  ).action(async (id: string, o: RosterOptions, command: Command) =>
    // Options written after the subcommand may land on `roster` itself: merge both.
    guard(() => setPause({ ...command.parent?.opts(), ...o }, id, true, out, ctx.io.cwd, env)),
  );
  addOptions(
    roster
      .command('resume')
      .description("end an executor's exclusion (a pause or any other)")
      .argument('<id>', 'executor id'),
  ).action(async (id: string, o: RosterOptions, command: Command) =>
    // Options written after the subcommand may land on `roster` itself: merge both.
    guard(() => setPause({ ...command.parent?.opts(), ...o }, id, false, out, ctx.io.cwd, env)),
  );
}
