/** Temporary git repositories and scripted command executors for engine tests. */
import { expect } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import {
  runCommand,
  type RunCommandHooks,
  type RunCommandOptions,
} from '../../../src/cli/commands/run.js';
import { renderFailure } from '../../../src/cli/context.js';
import { shellWord } from '../../../src/core/shell-word.js';

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    // No `maintenance run --auto` after each of the test's own commits (a process each);
    // epicflow's own git turns it off the same way.
    env: {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'maintenance.auto',
      GIT_CONFIG_VALUE_0: 'false',
    },
  }).trim();
}

export interface TestRepo {
  readonly dir: string;
  readonly tmp: string;
  write(path: string, text: string): void;
  read(path: string): string;
  commit(message: string): void;
  cleanup(): void;
}

/** A repository with one commit holding `files`. */
export function makeRepo(files: Record<string, string>): TestRepo {
  const tmp = mkdtempSync(join(tmpdir(), 'epicflow-engine-'));
  const dir = join(tmp, 'repo');
  mkdirSync(dir);
  git(dir, 'init', '-q', '-b', 'main');
  // What `git config` would write, without a process each (most engine tests make a repository).
  appendFileSync(
    join(dir, '.git', 'config'),
    '[user]\n\tname = Test\n\temail = test@example.com\n[commit]\n\tgpgsign = false\n',
  );
  const repo = repoIn(tmp);
  for (const [p, t] of Object.entries(files)) repo.write(p, t);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return repo;
}

/** The test repository `<tmp>/repo`. */
function repoIn(tmp: string): TestRepo {
  const dir = join(tmp, 'repo');
  const write = (path: string, text: string): void => {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  };
  return {
    dir,
    tmp,
    write,
    read: (path) => readFileSync(join(dir, path), 'utf8'),
    commit: (message) => {
      git(dir, 'add', '-A');
      git(dir, 'commit', '-q', '-m', message);
    },
    cleanup: () => rmSync(tmp, { recursive: true, force: true }),
  };
}

/**
 * A copy of `source`'s whole temp folder (the repository, its worktrees, epicflow's state
 * under `.git/epicflow`, the scripted coders' files), for tests that each need the same
 * starting point but cost a run to make it. Epicflow's state names no absolute path; git's
 * worktree links do (each admin folder's `gitdir` names its worktree's `.git` file, which
 * names the admin folder back), so the copy's links are pointed at the copy (what
 * `git worktree repair` does, which here would follow them to the source and repair that),
 * and the copy is refused if git still finds the source in it. Files the source's commits
 * hold are copied as they are: a config committed with absolute paths (a scripted coder's)
 * still names the source's files.
 */
export function copyRepo(source: TestRepo): TestRepo {
  const tmp = mkdtempSync(join(tmpdir(), 'epicflow-engine-'));
  execFileSync('cp', ['-a', `${source.tmp}/.`, tmp]);
  const copy = repoIn(tmp);
  const moved = (path: string): string => join(tmp, relative(source.tmp, path));
  const admin = join(copy.dir, '.git', 'worktrees');
  const trees: string[] = [];
  for (const name of existsSync(admin) ? readdirSync(admin) : []) {
    const link = join(admin, name, 'gitdir');
    const dotGit = moved(readFileSync(link, 'utf8').trim());
    writeFileSync(link, `${dotGit}\n`);
    writeFileSync(dotGit, `gitdir: ${join(admin, name)}\n`);
    trees.push(dirname(dotGit));
  }
  const links = [
    git(copy.dir, 'worktree', 'list', '--porcelain'),
    ...trees.map((t) => git(t, 'rev-parse', '--absolute-git-dir', '--show-toplevel')),
  ].join('\n');
  if (links.includes(source.tmp)) {
    copy.cleanup();
    throw new Error(`the copy of ${source.tmp} still names it:\n${links}`);
  }
  return copy;
}

/**
 * A link standing for the temp folder of whichever copy of a shared repository the current
 * test uses, for a config committed once in the shared one: its scripted coders named
 * `through` the link read their scripts and log their prompts in the copy the link points at
 * (`use`), so `prompts(copy, …)` is what ran in that copy. Tests of a file run one at a time.
 */
export interface CopyLink {
  /** `argv` of a scripted coder of `repo`, its files named through the link. */
  through(repo: TestRepo, argv: string[]): string[];
  /** Points the link at `repo`'s temp folder. */
  use(repo: TestRepo): void;
  cleanup(): void;
}

export function copyLink(): CopyLink {
  const home = mkdtempSync(join(tmpdir(), 'epicflow-link-'));
  const link = join(home, 'current');
  return {
    through: (repo, argv) => argv.map((a) => a.split(repo.tmp).join(link)),
    use: (repo) => {
      rmSync(link, { force: true });
      symlinkSync(repo.tmp, link);
    },
    cleanup: () => rmSync(home, { recursive: true, force: true }),
  };
}

export type Step = {
  write?: Record<string, string>;
  remove?: string[];
  symlink?: Record<string, string>;
  sh?: string[];
  stdout?: string;
  exit?: number;
};
export type Script = Record<string, Record<string, Step>>;

/** What a step does, as shell lines, in the order the step's kinds come; a failed one exits 1. */
function stepLines(step: Step): string[] {
  const lines: string[] = [];
  const folder = (path: string): void => {
    const d = dirname(path);
    if (d !== '.') lines.push(`[ -d ${shellWord(d)} ] || mkdir -p ${shellWord(d)} || exit 1`);
  };
  for (const [path, text] of Object.entries(step.write ?? {})) {
    folder(path);
    lines.push(`printf '%s' ${shellWord(text)} > ${shellWord(path)} || exit 1`);
  }
  for (const path of step.remove ?? []) lines.push(`rm -rf ${shellWord(path)} || exit 1`);
  for (const [path, target] of Object.entries(step.symlink ?? {})) {
    folder(path);
    lines.push(
      `rm -f ${shellWord(path)} && ln -s ${shellWord(target)} ${shellWord(path)} || exit 1`,
    );
  }
  for (const cmd of step.sh ?? []) lines.push(`/bin/sh -c ${shellWord(cmd)} || exit 1`);
  if (step.stdout !== undefined && step.stdout !== '') {
    lines.push(`printf '%s' ${shellWord(step.stdout)}`);
  }
  lines.push(`exit ${step.exit ?? 0}`);
  return lines;
}

/** A `case` over `variable` whose branches are `table`'s keys, `*` the default, read literally. */
function caseOf(variable: string, table: Record<string, string[]>, otherwise: string[]): string[] {
  const branches = Object.entries(table).filter(([key]) => key !== '*');
  const fallback = table['*'] ?? otherwise;
  return [
    `case "$${variable}" in`,
    ...branches.flatMap(([key, body]) => [`${shellWord(key)})`, ...body, ';;']),
    '*)',
    ...fallback,
    ';;',
    'esac',
  ];
}

/**
 * A scripted stand-in for a coding agent: `script` as a shell script. For the story and round
 * epicflow gives it (`EPICFLOW_STORY`, `EPICFLOW_ROUND`; round `*` for a round not listed, story
 * `*` for a story not listed) it writes, removes and links files, runs commands, prints and exits
 * as the step says (a step that fails exits 1). Each run first records the story, round and
 * prompt for `prompts`, in the folder its argument names. A shell, not Node: a start costs a few milliseconds, not 0.15 s.
 */
function coderShell(script: Script): string {
  const steps = (forStory: Record<string, Step>): string[] =>
    caseOf(
      'EPICFLOW_ROUND',
      Object.fromEntries(Object.entries(forStory).map(([round, step]) => [round, stepLines(step)])),
      ['exit 0'],
    );
  return [
    // The log's folder comes as the argument, so a test can point it elsewhere (a copied repository).
    'log="$1"',
    '[ -d "$log" ] || mkdir -p "$log" || exit 1',
    // One file a run, never an earlier run's: `set -C` refuses a name that is taken.
    'n=0',
    'set -C',
    'until { printf \'%s\\n%s\\n\' "$EPICFLOW_STORY" "$EPICFLOW_ROUND"; cat "$EPICFLOW_PROMPT_FILE" || exit 1; } 2>/dev/null > "$log/$$.$n"; do',
    '  n=$((n + 1)); [ "$n" -lt 100 ] || exit 1',
    'done',
    'set +C',
    ...caseOf(
      'EPICFLOW_STORY',
      Object.fromEntries(
        Object.entries(script).map(([story, forStory]) => [story, steps(forStory)]),
      ),
      ['exit 0'],
    ),
    '',
  ].join('\n');
}

/** Writes a coder script into the temp folder and returns the executor's argv. */
export function scriptedCoder(repo: TestRepo, name: string, script: Script): string[] {
  const path = join(repo.tmp, `${name}.sh`);
  writeFileSync(path, coderShell(script));
  return ['/bin/sh', path, join(repo.tmp, `${name}.log`)];
}

/** The prompts a scripted coder received, in order. */
export function prompts(
  repo: TestRepo,
  name: string,
): { story: string; round: string; prompt: string }[] {
  const folder = join(repo.tmp, `${name}.log`);
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .map((file) => join(folder, file))
    .map((path) => ({ path, at: statSync(path).mtimeMs }))
    .sort((a, b) => a.at - b.at)
    .map(({ path }) => {
      const [story = '', round = '', ...prompt] = readFileSync(path, 'utf8').split('\n');
      return { story, round, prompt: prompt.join('\n') };
    });
}

export interface ExecutorSpec {
  id: string;
  /** Argv of a `command` executor (ignored for other harnesses). */
  command: string[];
  priority?: number;
  slots?: number;
  roles?: string[];
  /** Default `command`. */
  harness?: string;
  model?: string;
}

export function configYaml(opts: {
  executors: ExecutorSpec[];
  gates?: string[];
  setup?: string;
  fixRounds?: number;
  concurrency?: number;
  extra?: string;
}): string {
  const lines = ['executors:'];
  for (const e of opts.executors) {
    lines.push(`  - id: ${e.id}`, `    harness: ${e.harness ?? 'command'}`);
    if ((e.harness ?? 'command') === 'command') {
      lines.push(`    command: ${JSON.stringify(e.command)}`);
    }
    if (e.model !== undefined) lines.push(`    model: ${JSON.stringify(e.model)}`);
    if (e.roles !== undefined) lines.push(`    roles: ${JSON.stringify(e.roles)}`);
    if (e.priority !== undefined) lines.push(`    priority: ${e.priority}`);
    if (e.slots !== undefined) lines.push(`    slots: ${e.slots}`);
  }
  if (opts.gates !== undefined) lines.push(`gates: ${JSON.stringify(opts.gates)}`);
  if (opts.setup !== undefined) lines.push(`setup: ${JSON.stringify(opts.setup)}`);
  if (opts.fixRounds !== undefined) lines.push(`fixRounds: ${opts.fixRounds}`);
  if (opts.concurrency !== undefined) lines.push(`concurrency: ${opts.concurrency}`);
  if (opts.extra !== undefined) lines.push(opts.extra);
  return `${lines.join('\n')}\n`;
}

export interface PlanStory {
  id: string;
  owns: string[];
  dependsOn?: string[];
  reads?: string[];
  testsChange?: boolean;
  description?: string;
}

export function planMarkdown(stories: PlanStory[], title = 'Test epic'): string {
  const yaml = stories
    .map((s) =>
      [
        `  - id: ${s.id}`,
        `    title: Story ${s.id}`,
        `    description: ${JSON.stringify(s.description ?? `Build ${s.id}.`)}`,
        `    owns: ${JSON.stringify(s.owns)}`,
        ...(s.reads ? [`    reads: ${JSON.stringify(s.reads)}`] : []),
        ...(s.dependsOn ? [`    dependsOn: ${JSON.stringify(s.dependsOn)}`] : []),
        ...(s.testsChange ? ['    testsChange: true'] : []),
      ].join('\n'),
    )
    .join('\n');
  return `# ${title}\n\n\`\`\`epicflow\nstories:\n${yaml}\n\`\`\`\n`;
}

export interface RunOutput {
  code: number;
  stdout: string;
  stderr: string;
  /** The waits before retries the engine asked for, in ms, in order (none was waited). */
  waits: number[];
}

/**
 * Runs `epicflow run` in-process against a plan file in the temp folder. The waits
 * before retries (backoffs) are recorded, not waited, unless `hooks.sleep` is given.
 */
export async function run(
  repo: TestRepo,
  plan: string,
  opts: Partial<RunCommandOptions> = {},
  hooks: RunCommandHooks = {},
): Promise<RunOutput> {
  const file = join(repo.tmp, 'epic.md');
  writeFileSync(file, plan);
  let stdout = '';
  let stderr = '';
  const waits: number[] = [];
  const io = {
    stdout: (s: string) => (stdout += s),
    stderr: (s: string) => (stderr += s),
    cwd: repo.tmp,
    isTTY: false,
  };
  const code = await runCommand(
    // The tests run as root: untrusted code runs as root too unless a test names a user, and
    // outside the kernel sandbox unless a test asks for it (the scripted coder logs its
    // prompts beside the repository, which the sandbox hides).
    { file, repo: repo.dir, agentUser: false, sandbox: false, ...opts },
    io,
    {
      sleep: async (ms) => {
        waits.push(ms);
      },
      // A user-level roster is read from the test's own folder, never from the real home.
      env: { ...process.env, XDG_CONFIG_HOME: join(repo.tmp, 'xdg') },
      ...hooks,
    },
    // What `main` does with a command's error: the one rendering, the exit code.
  ).catch((e: unknown) => renderFailure(io, e));
  return { code, stdout, stderr, waits };
}

export function stateDir(repo: TestRepo, epic = 'epic'): string {
  return join(repo.dir, '.git', 'epicflow', epic);
}

export function record(repo: TestRepo, story: string, epic = 'epic'): Record<string, unknown> {
  return JSON.parse(
    readFileSync(join(stateDir(repo, epic), 'stories', `${story}.json`), 'utf8'),
  ) as Record<string, unknown>;
}

export function reportJson(
  repo: TestRepo,
  epic = 'epic',
): {
  stories: {
    id: string;
    status: string;
    reason: string | null;
    executor: string | null;
    notes: string[];
  }[];
  halts: { kind: string; message: string }[];
} {
  return JSON.parse(readFileSync(join(stateDir(repo, epic), 'report.json'), 'utf8'));
}

/** Subjects of the merge commits on the epic branch, oldest first. */
export function epicMerges(repo: TestRepo, epic = 'epic'): string[] {
  const out = git(
    repo.dir,
    'log',
    '--first-parent',
    '--merges',
    '--reverse',
    '--format=%s',
    `epic/${epic}`,
  );
  return out === '' ? [] : out.split('\n');
}

export function showFile(repo: TestRepo, ref: string, path: string): string | null {
  try {
    return git(repo.dir, 'show', `${ref}:${path}`);
  } catch {
    return null;
  }
}

/** A failure reason of the local run: the short reason, then the story's log that holds the whole output. */
export function loggedReason(reason: string): unknown {
  const escaped = reason.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return expect.stringMatching(new RegExp(`^${escaped} \\(log: \\S+/logs/\\S+\\.log\\)$`));
}

/** A judge's answer clearing a story with full scores. */
export const CLEARED_VERDICT = [
  '```json',
  JSON.stringify({
    scores: { provides: 2, scope: 2, style: 2, tests: 2 },
    cleared: true,
    findings: [],
  }),
  '```',
  '',
].join('\n');
