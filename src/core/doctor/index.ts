/**
 * `epicflow doctor` (and the start of `epicflow run`): everything that would make a local
 * run fail in its first minutes, found at once from facts the shell gathers — executors
 * without their `${VAR}` keys or their CLI, a setup that insists on a lockfile the
 * repository does not commit, a repository without a base to start from. Pure.
 */
import type { EpicflowConfig } from '../config/types.js';
import { commandFolder } from '../init/app-folder.js';
import { localServerWarnings } from './local-server.js';
import { lockedInstall, MANAGER_LOCKFILES } from '../init/detect.js';
import {
  nodeSatisfies,
  TOOLCHAIN_INSTALL,
  type NeededProgram,
  type NodeRequirement,
} from './toolchains.js';

/** What the shell found about one executor. */
export interface ExecutorFacts {
  readonly id: string;
  /** `${VAR}` references of its env that are unset or empty. */
  readonly missingVars: readonly string[];
  /** Its CLI (or command) when that is not found; undefined when it is. */
  readonly missingBinary?: { readonly name: string; readonly install?: string } | undefined;
}

interface DoctorFacts {
  readonly config: EpicflowConfig;
  /** The config file as shown to the user. */
  readonly configFile: string;
  /** In the order of `config.executors`. */
  readonly executors: readonly ExecutorFacts[];
  /** Stories the plan pins to an executor (`executor:`), when a plan is given. */
  readonly pinned?: readonly { readonly story: string; readonly executor: string }[];
  /**
   * Files of the lockfile kind committed at HEAD (`MANAGER_LOCKFILES`), at the root or in
   * the folder setup changes into (`app/package-lock.json`).
   */
  readonly committed: ReadonlySet<string>;
  /** The same files in the working tree (committed or not). */
  readonly present: ReadonlySet<string>;
  /** Toolchain programs the setup and gates call (`neededPrograms`) that are not on PATH. */
  readonly missingPrograms?: readonly NeededProgram[];
  /**
   * When the setup or gates run on Node: the version of `node` on PATH (undefined when
   * there is none) and what the repository asks for (`nodeRequirements`).
   */
  readonly node?: {
    readonly version: string | undefined;
    readonly requirements: readonly NodeRequirement[];
  };
  /** Stories in flight at once: `epicflow run --concurrency`, else the config's. */
  readonly concurrency?: number;
  /** What detection could not decide (`detectionNotes`): said as warnings. */
  readonly detectionNotes?: readonly string[];
  readonly base: {
    /** HEAD resolves to a commit. */
    readonly hasCommits: boolean;
    /** The branch checked out; undefined when HEAD is detached. */
    readonly current?: string | undefined;
    /** origin/HEAD's branch, when set. */
    readonly defaultBranch?: string | undefined;
    /** The epic's branch exists already (a rerun continues it; the base no longer matters). */
    readonly epicBranchExists?: boolean | undefined;
  };
}

export interface Finding {
  /** Fatal: a run would fail; a warning: it runs, with less than configured. */
  readonly level: 'fatal' | 'warning';
  readonly message: string;
}

export interface Diagnosis {
  readonly findings: readonly Finding[];
  /** Executors a run leaves out (missing keys) while other coders carry on. */
  readonly leftOut: readonly string[];
  readonly fatal: boolean;
}

function executorProblems(e: ExecutorFacts): string[] {
  const out = e.missingVars.map((v) => `\${${v}} is not set`);
  if (e.missingBinary !== undefined) {
    out.push(
      `${e.missingBinary.name} is not on PATH${e.missingBinary.install === undefined ? '' : ` (install: ${e.missingBinary.install})`}`,
    );
  }
  return out;
}

function executorFindings(facts: DoctorFacts, findings: Finding[]): string[] {
  const { config } = facts;
  const byId = new Map(facts.executors.map((e) => [e.id, e]));
  const ok = (id: string): boolean =>
    executorProblems(byId.get(id) ?? { id, missingVars: [] }).length === 0;
  const coders = config.executors.filter((e) => e.roles.includes('coder')).map((e) => e.id);
  const goodCoders = coders.filter(ok);
  const pinnedTo = new Map<string, string[]>();
  for (const p of facts.pinned ?? [])
    pinnedTo.set(p.executor, [...(pinnedTo.get(p.executor) ?? []), p.story]);
  const leftOut: string[] = [];
  for (const e of config.executors) {
    const facts_ = byId.get(e.id);
    if (facts_ === undefined) continue;
    const problems = executorProblems(facts_);
    if (problems.length === 0) continue;
    const what = `executor "${e.id}" (${facts.configFile}): ${problems.join('; ')}`;
    const stories = pinnedTo.get(e.id) ?? [];
    const isCoder = e.roles.includes('coder');
    if (config.judge?.executor === e.id) {
      findings.push({ level: 'fatal', message: `${what}; it is the judge` });
    } else if (stories.length > 0) {
      findings.push({
        level: 'fatal',
        message: `${what}; the plan pins ${stories.map((s) => `story ${s}`).join(', ')} to it`,
      });
    } else if (isCoder && goodCoders.length === 0) {
      findings.push({ level: 'fatal', message: `${what}; no coder is left to write the stories` });
    } else {
      findings.push({
        level: 'warning',
        message: `${what}; it will be left out${isCoder ? ` (coding goes to ${goodCoders.join(', ')})` : ''}`,
      });
      if (facts_.missingVars.length > 0) leftOut.push(e.id);
    }
  }
  return leftOut;
}

function lockfileFindings(facts: DoctorFacts, findings: Finding[]): void {
  const setup = facts.config.setup;
  if (setup === undefined) return;
  const manager = lockedInstall(setup);
  if (manager === undefined) return;
  const dir = commandFolder(setup);
  const files = MANAGER_LOCKFILES[manager].map((f) => (dir === '.' ? f : `${dir}/${f}`));
  if (files.some((f) => facts.committed.has(f))) return;
  const uncommitted = files.find((f) => facts.present.has(f));
  findings.push({
    level: 'fatal',
    message:
      uncommitted === undefined
        ? `setup "${setup}" (${facts.configFile}) needs ${files.join(' or ')}, and the repository has none: commit one, or install without it`
        : `setup "${setup}" (${facts.configFile}) needs ${uncommitted} committed: story worktrees start from commits, and it is not in HEAD`,
  });
}

/** `setup "…"` or `gate "…"`: the command as the config names it. */
function commandName(config: EpicflowConfig, command: string): string {
  const gates = [...config.gates, ...(config.packages ?? []).flatMap((p) => p.gates)];
  return gates.includes(command) ? `the gate "${command}"` : `setup "${command}"`;
}

/** What a command of the config needs that is not on PATH, and how to install it. */
export function missingProgramMessage(
  config: EpicflowConfig,
  configFile: string,
  p: NeededProgram,
): string {
  return `${commandName(config, p.command)} (${configFile}) needs ${p.program}, which is not on PATH; install it: ${TOOLCHAIN_INSTALL[p.program] ?? p.program}`;
}

function toolchainFindings(facts: DoctorFacts, findings: Finding[]): void {
  const { config } = facts;
  for (const p of facts.missingPrograms ?? []) {
    findings.push({ level: 'fatal', message: missingProgramMessage(config, facts.configFile, p) });
  }
  const node = facts.node;
  if (node?.version === undefined) return;
  for (const r of node.requirements) {
    if (nodeSatisfies(node.version, r.range) !== false) continue;
    findings.push({
      level: 'fatal',
      message: `${r.from} asks for Node ${r.range}, and node on PATH is ${node.version}; install it: nvm install ${r.range.replace(/^[^\d]*/, '').split(/\s/)[0] ?? r.range}, or see https://nodejs.org/en/download`,
    });
  }
}

function gateFindings(facts: DoctorFacts, findings: Finding[]): void {
  if (
    facts.config.gates.length > 0 ||
    (facts.config.packages ?? []).some((p) => p.gates.length > 0)
  )
    return;
  findings.push({
    level: 'warning',
    message: `no gates in ${facts.configFile} and none found in the repository: stories will be judged by the perimeter alone (each merges when it stays within its owns); add the commands that must pass to gates:`,
  });
}

function localServerFindings(facts: DoctorFacts, findings: Finding[]): void {
  for (const message of localServerWarnings(facts.config, facts.concurrency)) {
    findings.push({ level: 'warning', message });
  }
}

function detectionFindings(facts: DoctorFacts, findings: Finding[]): void {
  for (const note of facts.detectionNotes ?? []) findings.push({ level: 'warning', message: note });
}

function baseFindings(facts: DoctorFacts, findings: Finding[]): void {
  const { base } = facts;
  if (!base.hasCommits) {
    findings.push({
      level: 'fatal',
      message:
        'the repository has no commits yet: an epic branch starts from HEAD; commit something first',
    });
    return;
  }
  if (base.epicBranchExists === true) return;
  if (base.current === undefined) {
    findings.push({
      level: 'warning',
      message: 'HEAD is detached: the epic branch will start from that commit, not from a branch',
    });
  } else if (base.defaultBranch !== undefined && base.current !== base.defaultBranch) {
    findings.push({
      level: 'warning',
      message: `the epic branch will start from HEAD on "${base.current}", not from the default branch "${base.defaultBranch}"`,
    });
  }
}

/** Every problem found, fatal ones first. */
export function diagnose(facts: DoctorFacts): Diagnosis {
  const findings: Finding[] = [];
  const leftOut = executorFindings(facts, findings);
  lockfileFindings(facts, findings);
  toolchainFindings(facts, findings);
  gateFindings(facts, findings);
  detectionFindings(facts, findings);
  localServerFindings(facts, findings);
  baseFindings(facts, findings);
  const sorted = [
    ...findings.filter((f) => f.level === 'fatal'),
    ...findings.filter((f) => f.level === 'warning'),
  ];
  return { findings: sorted, leftOut, fatal: sorted.some((f) => f.level === 'fatal') };
}

/** One line per finding: `fatal: …` / `warning: …`. */
export function findingLines(findings: readonly Finding[]): string[] {
  return findings.map((f) => `${f.level}: ${f.message}`);
}
