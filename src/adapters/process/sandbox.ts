/**
 * The kernel's walls around an untrusted step: bubblewrap (`bwrap`) starts it in PID,
 * mount, IPC and UTS namespaces of its own, without capabilities and with no new
 * privileges (no `sudo` inside). When the step's first process ends, the kernel ends
 * every other process of its PID namespace — a double fork, `setsid`, a thread whose
 * leader exited — so nothing outlives the step. What it sees is `core/sandbox.ts`'s
 * layout: the system read-only, its tree and home, a fresh `/tmp`; never the user's home,
 * the repository's `.git`, epicflow's state, or another story's tree.
 *
 * `sandbox()` proves once per process that bubblewrap runs here (installed, and the
 * kernel allows user namespaces), or says why not and what to do.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { lstat, mkdir, readFile, readlink, realpath, rm, stat } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { EpicflowError } from '../../core/errors.js';
import { makeStepRepository, type StepRepository } from '../git/step-repository.js';
import { withStartFolder } from '../../core/paths.js';
import {
  firstProcess,
  sandboxArgs,
  SYSTEM_FOLDERS,
  passage,
  throughPassage,
  toolFolders,
  toolsInTheSandbox,
  type NamespaceTools,
  type SystemEntry,
  type VeiledEntry,
} from '../../core/sandbox.js';
import { ownKeyring } from './keyring.js';
import { namespaceWatch, type NamespaceWatch } from './namespace.js';
import { runProcess, which } from './run-process.js';

/** A step's walls, ready to wrap an argv. */
export interface Sandbox {
  /** The bubblewrap binary. */
  readonly bwrap: string;
  /**
   * Makes, in `into`, the repository of a step whose folders are `folders` when one of
   * them is a linked tree of the sandbox's repository (`step-repository.ts`); undefined
   * otherwise. For a step of another user, made before its folders are given to it.
   */
  repositoryFor(folders: readonly string[], into: string): Promise<StepRepository | undefined>;
  /**
   * Prepares a step: a fresh `/tmp` (and HOME, when `home` is not given) under the
   * sandbox's scratch folder; `argv` is what to run, `done` removes the step's folders, and
   * `watch` is what a kill of it needs (its namespace found first, its end awaited after).
   */
  step(
    argv: readonly string[],
    options: {
      readonly cwd: string;
      readonly env: Readonly<Record<string, string>>;
      readonly writable: readonly string[];
      /** The step's HOME, one of `writable`; none: a fresh one. */
      readonly home?: string | undefined;
      /** A fresh folder to be the step's `/tmp`; none: one is made. */
      readonly tmp?: string | undefined;
      /** The user the step runs as, when not this process's: tool folders it cannot reach are left out. */
      readonly as?: StepUser | undefined;
      /** Paths inside its own folders it must not see (see `veiledEntries`). */
      readonly veiled?: readonly string[] | undefined;
      /**
       * The step's repository, made by `repositoryFor` in a folder given to `as`; a step of
       * this process's user gets one made here.
       */
      readonly repository?: StepRepository | undefined;
    },
  ): Promise<{
    argv: string[];
    env: Record<string, string>;
    done: () => Promise<void>;
    watch: NamespaceWatch;
  }>;
}

/**
 * The entries to veil, as they really are: one that is not there is left alone; a link is
 * followed to what it names, which is veiled when it is inside the step's own folders
 * (elsewhere the step sees only system and tool folders, read-only, or nothing).
 */
async function veiledEntries(
  paths: readonly string[],
  own: readonly string[],
): Promise<VeiledEntry[]> {
  const out: VeiledEntry[] = [];
  for (const path of paths) {
    const target = await real(path);
    if (target === null || !own.some((dir) => target.startsWith(`${dir}/`))) continue;
    const st = await stat(target).catch(() => null);
    if (st !== null) out.push({ path: target, folder: st.isDirectory() });
  }
  return out;
}

/** Why the sandbox cannot run here, and what to do. */
export class SandboxUnavailable extends EpicflowError {
  constructor(reason: string, fix: string) {
    super('isolation', `the kernel sandbox cannot run here: ${reason}`, { details: [fix] });
  }
}

let probed: Promise<string> | undefined;

/** The system folders of this machine (links kept as links). */
async function systemEntries(): Promise<SystemEntry[]> {
  const out: SystemEntry[] = [];
  for (const path of SYSTEM_FOLDERS) {
    const st = await lstat(path).catch(() => null);
    if (st === null) continue;
    if (st.isSymbolicLink()) out.push({ path, linkTo: await readlink(path) });
    else if (st.isDirectory()) out.push({ path });
  }
  return out;
}

const toRemove = new Set<string>();

/** Removes `folder` when the process exits, whatever is left in it (best effort). */
function removeAtExit(folder: string): void {
  if (toRemove.size === 0) {
    process.once('exit', () => {
      for (const f of toRemove) {
        try {
          rmSync(f, { recursive: true, force: true });
        } catch {
          // A step's file another user left: the folder stays, as any temporary file would.
        }
      }
    });
  }
  toRemove.add(folder);
}

/** A real path, or null when it does not exist. */
async function real(path: string): Promise<string | null> {
  return realpath(path).catch(() => null);
}

/**
 * The sandbox, proven to run on this machine (once per process): bubblewrap found on
 * `env`'s PATH, and a trivial step started in it. Throws `SandboxUnavailable` otherwise.
 * `scratch`: the folder under which each step gets its fresh `/tmp` and home.
 */
export async function sandbox(
  env: Readonly<Record<string, string>>,
  scratch: string = join(tmpdir(), `epicflow-sandbox-${process.pid}`),
  /** Folders no step sees even inside a folder it may read (`.git`, epicflow's state). */
  hidden: readonly string[] = [],
  /**
   * The repository's git folder: a step in one of its linked trees gets a repository of
   * its own there (`repositoryFor`); the folder itself is hidden like `hidden`.
   */
  repository?: string,
): Promise<Sandbox> {
  probed ??= probe(env);
  const bwrap = await probed.catch((e: unknown) => {
    probed = undefined;
    throw e;
  });
  const system = await systemEntries();
  const keyring = await ownKeyring();
  // Made here: removed when this process exits (each step's folders go when the step ends).
  if ((await mkdir(scratch, { recursive: true, mode: 0o700 })) !== undefined) removeAtExit(scratch);
  const homes = [homedir(), env['HOME'] ?? ''].filter((h) => h !== '');
  const realHidden = (
    await Promise.all([...hidden, ...(repository === undefined ? [] : [repository])].map(real))
  ).filter((p): p is string => p !== null);
  const repositoryFor = (
    folders: readonly string[],
    into: string,
  ): Promise<StepRepository | undefined> =>
    repository === undefined
      ? Promise.resolve(undefined)
      : makeStepRepository(repository, folders, into);
  return {
    bwrap,
    repositoryFor,
    async step(argv, options) {
      const id = join(scratch, randomUUID());
      const tmp = options.tmp ?? join(id, 'tmp');
      await mkdir(tmp, { recursive: true, mode: 0o700 });
      let home = options.home;
      if (home === undefined) {
        home = join(id, 'home');
        await mkdir(home, { mode: 0o700 });
      }
      const pathEntries = (options.env['PATH'] ?? '').split(delimiter).filter((p) => p !== '');
      const resolved = await Promise.all(pathEntries.map(real));
      const program = argv[0] ?? '';
      const programs = [program, process.execPath];
      if (!program.startsWith('/')) {
        const found = which(program, options.env);
        if (found !== null) programs.push(found);
      }
      const realPrograms = await Promise.all(programs.map(real));
      const candidates = toolFolders(
        [...pathEntries, ...resolved].filter((p): p is string => p !== null),
        [...programs, ...realPrograms].filter((p): p is string => p !== null),
        homes,
        await Promise.all(
          argv
            .slice(1)
            .filter((a) => a.startsWith('/'))
            .map(async (path) => ({
              path,
              folder: (await stat(path).catch(() => null))?.isDirectory() === true,
            })),
        ),
      );
      // Only folders that exist, as they really are (a PATH names folders that may not),
      // and that the step's user may reach (bubblewrap refuses to bind one it may not).
      const writable = (
        await Promise.all(withStartFolder(options.cwd, options.writable).map(real))
      ).filter((p): p is string => p !== null);
      let stepRepository =
        options.as === undefined
          ? await repositoryFor(writable, join(id, 'git'))
          : options.repository;
      // A step of another user that may not read the repository's objects runs without
      // (as before there was one): where root starts it, the folders above them are passed
      // through its mount namespace; otherwise they must be passable to it.
      if (stepRepository !== undefined && options.as !== undefined) {
        const as = options.as;
        const reads = async (folder: string): Promise<boolean> => {
          const st = await stat(folder).catch(() => null);
          return (
            st !== null &&
            (modeBits(st, as) & 0o5) === 0o5 &&
            (as.throughNamespace !== undefined || (await reachable(folder, as)))
          );
        };
        for (const folder of stepRepository.objects) {
          if (await reads(folder)) continue;
          stepRepository = undefined;
          break;
        }
      }
      const ofRepository =
        stepRepository === undefined ? [] : [stepRepository.folder, ...stepRepository.objects];
      // Where root starts the step, its user reaches its folders through a mount namespace
      // of its own (`throughPassage`), as through the folders above them.
      const tools = options.as?.throughNamespace;
      const opened =
        options.as !== undefined && tools !== undefined
          ? await closedAbove([...writable, tmp, home, ...ofRepository], options.as)
          : undefined;
      const as =
        options.as === undefined || opened === undefined
          ? options.as
          : { ...options.as, passes: (folder: string) => opened.has(folder) };
      const readable: string[] = [];
      for (const dir of await Promise.all(candidates.map(real))) {
        if (dir !== null && (as === undefined || (await reachable(dir, as)))) {
          readable.push(dir);
        }
      }
      // A folder the passage opens that is itself closed to the step's user (the folder
      // that holds the repository and a script beside it): only the programs and files its
      // command line names there are handed, each by itself.
      const named = [
        ...realPrograms,
        ...(await Promise.all(
          argv
            .slice(1)
            .filter((a) => a.startsWith('/'))
            .map(real),
        )),
      ].filter((p): p is string => p !== null);
      const files = new Set<string>();
      if (opened !== undefined) {
        for (const dir of readable.filter((d) => opened.has(d))) {
          readable.splice(readable.indexOf(dir), 1);
          for (const file of named) {
            if (file.startsWith(`${dir}/`) && (await stat(file).catch(() => null))?.isFile()) {
              files.add(file);
            }
          }
        }
        readable.push(...files);
      }
      const cwd = (await real(options.cwd)) ?? options.cwd;
      const veiled = await veiledEntries(options.veiled ?? [], writable);
      const args = sandboxArgs({
        system,
        readable,
        hidden: realHidden,
        writable,
        veiled,
        tmp,
        cwd,
        home,
        ...(stepRepository === undefined ? {} : { repository: stepRepository }),
      });
      const walled = [bwrap, ...args, '--', ...firstProcess(argv, keyring.prefix)];
      return {
        argv:
          opened === undefined || options.as === undefined || tools === undefined
            ? walled
            : throughPassage(
                options.as,
                passage(
                  opened,
                  [...writable, tmp, home, ...ofRepository, ...readable].map((path) => ({
                    path,
                    folder: !files.has(path),
                  })),
                ),
                walled,
                tools,
              ),
        env: {
          ...options.env,
          ...keyring.env,
          HOME: home,
          TMPDIR: '/tmp',
          ...toolsInTheSandbox(options.env, home, {
            gitWorks: stepRepository !== undefined,
            pnpmTree: await pnpmTree([cwd, ...writable]),
          }),
        },
        done: () => rm(id, { recursive: true, force: true }),
        watch: namespaceWatch(),
      };
    },
  };
}

/** The user a step runs as, and the folders it was let through besides its mode bits (an ACL entry of its own). */
export interface StepUser {
  readonly uid: number;
  readonly gid: number;
  readonly passes?: (folder: string) => boolean;
  /**
   * Root starts the step: the user reaches its folders through a mount namespace of its
   * own made with these (`throughPassage`), not through folders opened to it.
   */
  readonly throughNamespace?: NamespaceTools | undefined;
}

/** The permission bits that apply to `who` (owner's, group's or others'), in the lowest three. */
function modeBits(
  st: { readonly uid: number; readonly gid: number; readonly mode: number },
  who: { readonly uid: number; readonly gid: number },
): number {
  return st.uid === who.uid ? st.mode >> 6 : st.gid === who.gid ? st.mode >> 3 : st.mode;
}

/**
 * The folders above `paths` that `who` may not pass by their mode bits (a home, `/root`):
 * what a passage has to open for it.
 */
export async function closedAbove(
  paths: readonly string[],
  who: { readonly uid: number; readonly gid: number },
): Promise<Set<string>> {
  const closed = new Set<string>();
  for (const path of paths) {
    const parts = path.split('/').filter((p) => p !== '');
    // `/` itself is passable to all on any machine a step can run on.
    for (let i = 1; i < parts.length; i++) {
      const at = `/${parts.slice(0, i).join('/')}`;
      const st = await stat(at).catch(() => null);
      if (st === null) break;
      if ((modeBits(st, who) & 0o1) === 0) closed.add(at);
    }
  }
  return closed;
}

/** Whether the user may pass through every folder down to `path` and read it (by its mode bits, or an entry of its own). */
async function reachable(path: string, who: StepUser): Promise<boolean> {
  const parts = path.split('/').filter((p) => p !== '');
  for (let i = 0; i <= parts.length; i++) {
    const at = `/${parts.slice(0, i).join('/')}`;
    const st = await stat(at).catch(() => null);
    if (st === null) return false;
    const bits = st.uid === who.uid ? st.mode >> 6 : st.gid === who.gid ? st.mode >> 3 : st.mode;
    // A folder to bind needs passing through only (what the step opens in it is checked
    // when it opens it); a file needs reading.
    const need = i === parts.length && !st.isDirectory() ? 0o4 : 0o1;
    if ((bits & need) !== need && !(need === 0o1 && who.passes?.(at) === true)) return false;
  }
  return true;
}

/** Whether one of `folders` is pnpm's: its lockfile or workspace file, or a manifest naming it. */
async function pnpmTree(folders: readonly string[]): Promise<boolean> {
  for (const dir of new Set(folders)) {
    for (const file of ['pnpm-lock.yaml', 'pnpm-workspace.yaml']) {
      if ((await lstat(join(dir, file)).catch(() => null)) !== null) return true;
    }
    const manifest = await readFile(join(dir, 'package.json'), 'utf8').catch(() => '');
    if (/"packageManager"\s*:\s*"pnpm@/.test(manifest)) return true;
  }
  return false;
}

/** Finds bubblewrap and starts one empty step in it, or says why it cannot run here. */
async function probe(env: Readonly<Record<string, string>>): Promise<string> {
  const bwrap = which('bwrap', env);
  if (bwrap === null) {
    throw new SandboxUnavailable(
      'bubblewrap (bwrap) is not installed',
      'install it: `sudo apt-get install -y bubblewrap` (Debian, Ubuntu), `sudo dnf install bubblewrap` (Fedora)',
    );
  }
  const r = await runProcess(
    [
      bwrap,
      '--unshare-user',
      '--unshare-pid',
      '--unshare-ipc',
      '--die-with-parent',
      '--ro-bind',
      '/',
      '/',
      '--proc',
      '/proc',
      '--',
      'true',
    ],
    { cwd: '/', env, timeoutMs: 30_000 },
  );
  if (r.exitCode !== 0) {
    const said = [r.spawnError?.message, r.stderr.trim()].filter(Boolean).join(' | ');
    throw new SandboxUnavailable(
      `bubblewrap could not make a user namespace (${said || `exit ${String(r.exitCode)}`})`,
      'allow unprivileged user namespaces: `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu 23.10 and later), `sudo sysctl -w kernel.unprivileged_userns_clone=1` (older Debian), or `user.max_user_namespaces` above 0',
    );
  }
  return bwrap;
}
