/**
 * Where code epicflow does not trust runs: the coding agent, the judge's and
 * planner's tools, and setup and gates (they run what the agent wrote).
 *
 * `agentUser(...)` runs it as a separate unprivileged user, so it cannot read
 * what epicflow's own process holds: another uid cannot read `/proc/<pid>/environ`
 * or `/proc/<pid>/mem` of ours, nor ptrace it, nor read our private files. Nothing a
 * step started — not even a process that left the group with `setsid` and emptied its
 * environment — outlives it: in the kernel sandbox the kernel ends it with the step's
 * PID namespace (awaited after a kill: namespace.ts); without it, every process of that
 * user is ended after each step (`kill -1` as that user, after freezing them). Before a
 * step the folders it may write (its worktree, its home) are given to that user, and
 * taken back after it (hand-over.ts); the repository's `.git` stays epicflow's
 * (readable, not writable).
 *
 * `sameUser()` runs it as epicflow's own user (a local run): its process group is
 * killed, and every process still carrying the step's marker variable is ended
 * after it (a process that empties its environment escapes the marker: see
 * docs/security.md).
 *
 * Becoming the other user takes root (spawn with uid/gid) or passwordless sudo
 * (`sudo -n -E -u <user>`), as GitHub-hosted runners have.
 */
import { randomUUID } from 'node:crypto';
import { lstat, mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { EpicflowError } from '../../core/errors.js';
import { withStartFolder } from '../../core/paths.js';
import type { TreeWriter } from '../git/tree-writer.js';
import {
  dropLeftovers,
  ensureUser,
  establishPrivilege,
  freshAccount,
  proveIsolated,
  reapAccount,
  USER_NAME,
  type AgentAccount,
} from './agent-user.js';
import { canonical, forgetPassages, passages } from './agent-folders.js';
import { claimUser } from './claims.js';
import { handOver } from './hand-over.js';
import { ownKeyring } from './keyring.js';
import type { NamespaceWatch } from './namespace.js';
import { pidMark, reapMarked, RUN_MARKER } from './reap.js';
import type { Sandbox } from './sandbox.js';
import { agentTreeWriter, namespaceTools } from './agent-writer.js';
import {
  runProcess,
  shellArgv,
  type ProcessResult,
  type RunProcessOptions,
} from './run-process.js';

export interface UntrustedRunOptions extends RunProcessOptions {
  /** Folders the code may write besides `cwd` (its HOME, a temp folder). */
  readonly writable?: readonly string[];
  /**
   * Run with a fresh home of the step's own (setup and gates), removed after it, never
   * epicflow's; as epicflow's own user outside the sandbox, `env`'s HOME is kept.
   */
  readonly ownHome?: boolean;
  /**
   * Which role of which story (or job) the code plays: a coder of one executor, a
   * judge, a verifier, the story's checks. Outside the kernel sandbox, as separate users,
   * no account plays two roles of one scope, so what one role left behind (a home's
   * settings, a file in /tmp) never runs inside another (a judge with its own key); without
   * it, any free account will do. In the sandbox every step runs as the one user, with a
   * home and a /tmp of its own, and sees no folder of another step.
   */
  readonly seat?: { readonly scope: string; readonly role: string };
  /**
   * Paths inside its folders the code must not see (a CLI's project settings and plugins,
   * for a helper in a tree someone else wrote last): veiled in the kernel sandbox; without
   * it, they are there.
   */
  readonly veiled?: readonly string[];
}

export interface Untrusted {
  /** True when the code runs as a separate user. */
  readonly isolated: boolean;
  /**
   * True when the code runs inside the kernel sandbox: it sees its own tree and home and
   * the system's folders, never epicflow's state or another story's tree.
   */
  readonly walled: boolean;
  /** One line for notes, logs and the job summary. */
  readonly description: string;
  /**
   * Who epicflow's trees for steps are written as, when not epicflow (see `TreeWriter`):
   * the run's agent user where epicflow is root and every step runs in the kernel sandbox.
   */
  readonly writer?: TreeWriter;
  /**
   * Runs `argv` as untrusted code; every process it left behind is ended, and every
   * folder it was handed is epicflow's again, before this resolves.
   */
  run(argv: readonly string[], options: UntrustedRunOptions): Promise<ProcessResult>;
  /** `run` of a shell command line (setup and gates). */
  runShell(command: string, options: UntrustedRunOptions): Promise<ProcessResult>;
  /**
   * Removes folders untrusted code may have written (a tree before it is removed or checked
   * out anew, one a killed job left with the untrusted user), never following a link; as
   * epicflow's own user, nothing to do: epicflow removes them itself.
   */
  discard(folders: readonly string[]): Promise<void>;
}

/**
 * Untrusted code as epicflow's own user. In the kernel sandbox (`walls`), the kernel ends
 * everything the step started when it ends, and the step sees only its tree, its home
 * (the one `env` names when it is one of its writable folders, else a fresh one) and the
 * system's folders. Without it, the process group and the step's marker are ended after it.
 */
export function sameUser(walls?: Sandbox): Untrusted {
  const run = async (
    argv: readonly string[],
    { writable, ownHome, seat: _s, veiled, ...options }: UntrustedRunOptions,
  ): Promise<ProcessResult> => {
    if (walls !== undefined) {
      const step = await walls.step(argv, {
        cwd: options.cwd,
        env: options.env,
        writable: writable ?? [],
        home: ownHome === true ? undefined : givenHome(options.env, writable),
        veiled,
      });
      try {
        return await runProcess(step.argv, {
          ...options,
          env: step.env,
          beforeKill: step.watch.beforeKill,
        });
      } finally {
        await step.watch.settled();
        await step.done();
      }
    }
    const marker = randomUUID();
    const since = await pidMark();
    try {
      return await runProcess(argv, { ...options, env: { ...options.env, [RUN_MARKER]: marker } });
    } finally {
      // Tools started in sessions of their own escape the group kill, not the marker.
      await reapMarked(marker, since);
    }
  };
  return {
    isolated: false,
    walled: walls !== undefined,
    description:
      walls === undefined
        ? "as epicflow's own user (not isolated)"
        : "as epicflow's own user inside the kernel sandbox (bubblewrap): it sees only its own tree and home and the system's folders; everything it starts ends with the step",
    run,
    runShell: (command, options) => run(shellArgv(command, options.env), options),
    discard: () => Promise.resolve(),
  };
}

/** `env`'s HOME when it is one of the step's writable folders (an executor's home). */
function givenHome(
  env: Readonly<Record<string, string>>,
  writable: readonly string[] | undefined,
): string | undefined {
  const home = env['HOME'];
  return home !== undefined && (writable ?? []).includes(home) ? home : undefined;
}

/** Kills the namespace whose pid 1 is `$1`, if `$1` still started at `$2` (pids are reused). */
const KILL_NAMESPACE = `[ "$(cut -d' ' -f22 "/proc/$1/stat" 2>/dev/null)" = "$2" ] && kill -KILL "$1"; true`;

interface AgentUserOptions {
  /**
   * The pool the users untrusted code runs as are taken from: `<user>`, `<user>-2` …
   * (created — system users, no login, no sudo — when missing). No two runs share one: a
   * user is claimed for as long as this process lives (a lock the kernel holds for it). In
   * the kernel sandbox every step of this process runs as that one user, side by side (the
   * kernel ends each step's processes with its namespace); without it, every process of a
   * user is ended after each step, so a user runs one step at a time and steps side by
   * side get users of their own.
   */
  readonly user: string;
  /**
   * The folders epicflow owns under which every folder the code may write lives (its
   * trees and homes). A folder outside them is never handed over, nor a root itself.
   */
  readonly roots: readonly string[];
  /** The folder under which setup and gates get a home of each user's own. */
  readonly home: string;
  /** The environment `sudo`, `id` and `useradd` are found with (PATH). */
  readonly env: Readonly<Record<string, string>>;
  /** The kernel sandbox each step runs in, as that user; none: steps run as that user alone. */
  readonly sandbox?: Sandbox;
}

/**
 * Untrusted code as separate users. Refuses (`isolation`) when that cannot be had or
 * does not hold: no root and no passwordless sudo, a user that is root or epicflow's own,
 * a user that may use sudo, or one that can read this process's environment.
 */
export async function agentUser(options: AgentUserOptions): Promise<Untrusted> {
  if (!USER_NAME.test(options.user)) {
    throw new EpicflowError(
      'isolation',
      `invalid user name for untrusted code: ${JSON.stringify(options.user)}`,
    );
  }
  const root = await establishPrivilege(options.env);
  const self = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  const roots = await Promise.all(options.roots.map((r) => canonical(r)));

  /**
   * The folder, refused unless it is strictly inside a root and every folder on the way
   * down from that root is epicflow's own (not a link, not the agent's): handing a folder
   * over chowns it recursively, so `/tmp`, a home or a folder the agent could redirect
   * must never get there.
   */
  const inside = async (folder: string): Promise<string> => {
    const real = await canonical(folder);
    const top = roots.find((r) => real.startsWith(`${r}/`));
    const link = (await lstat(folder).catch(() => null))?.isSymbolicLink() === true;
    if (top === undefined || link) {
      throw new EpicflowError(
        'isolation',
        `refusing to hand ${folder} to untrusted code: it is not inside epicflow's own folders`,
        { details: [`epicflow's folders: ${roots.join(', ')}`] },
      );
    }
    for (let d = dirname(real); d.length > top.length; d = dirname(d)) {
      const st = await lstat(d).catch(() => null);
      if (st !== null && (st.isSymbolicLink() || (st.uid !== self.uid && st.uid !== 0))) {
        throw new EpicflowError(
          'isolation',
          `refusing to hand ${folder} to untrusted code: ${d} is not epicflow's`,
        );
      }
    }
    return real;
  };

  const walls = options.sandbox;
  const walled = walls !== undefined;
  // Where epicflow is root and the sandbox runs, each step reaches its folders through a
  // mount namespace of its own (core/sandbox.ts `throughPassage`: util-linux's `unshare`
  // and `setpriv`, and bash), no folder above them opened; without those tools, passages.
  const throughNamespace =
    walled && root.privilege === 'root' ? await namespaceTools(options.env) : undefined;
  const homeRoot = await inside(options.home);
  await mkdir(homeRoot, { recursive: true, mode: 0o711 });
  const passage = await passages(root);
  const hand = handOver({ root, self, marks: homeRoot });
  // Outside the sandbox (which gives each step one itself): a session keyring of the step's
  // own, not epicflow's, which a change of user does not take away.
  const keyring = walled ? undefined : await ownKeyring();

  /** What an account's first holder does: an earlier job's processes, files and passages gone. */
  const clean = async (account: AgentAccount): Promise<void> => {
    await reapAccount(account, root);
    await freshAccount(account, root);
    await forgetPassages(account, root);
  };
  /**
   * Establishes one more account: claimed, created, cleaned of an earlier job, proven. In
   * the sandbox the account is shared with every other process whose steps run there (the
   * kernel keeps their steps apart, none is reaped by listing its user's processes): the
   * first of them cleans it while it holds it alone, and no process without the sandbox
   * may take it meanwhile. Without the sandbox, a process holds its accounts alone.
   */
  const establish = async (): Promise<AgentAccount> => {
    let cleaned: AgentAccount | undefined;
    const user = await claimUser(
      options.user,
      root,
      walled
        ? async (name) => {
            cleaned = await ensureUser(name, root);
            await clean(cleaned);
          }
        : undefined,
    );
    const account = cleaned ?? (await ensureUser(user, root));
    if (!walled) await clean(account);
    await proveIsolated(account, root);
    return account;
  };
  const idle: AgentAccount[] = [await establish()];
  const first = idle[0] as AgentAccount;
  let establishing: Promise<AgentAccount> | undefined;
  /** The role each account has played, by scope (a story, a job). */
  const played = new Map<AgentAccount, Map<string, string>>();
  const fits = (account: AgentAccount, seat: UntrustedRunOptions['seat']): boolean =>
    seat === undefined || (played.get(account)?.get(seat.scope) ?? seat.role) === seat.role;
  /** An account no step of this process runs as now, and that played no other role of the seat's scope. */
  const take = async (seat: UntrustedRunOptions['seat']): Promise<AgentAccount> => {
    const at = idle.findIndex((a) => fits(a, seat));
    let account: AgentAccount;
    if (at >= 0) {
      account = idle.splice(at, 1)[0] as AgentAccount;
    } else {
      // One at a time: claims of the pool are serial anyway.
      const next = (establishing ?? Promise.resolve()).then(establish, establish);
      establishing = next;
      account = await next;
    }
    if (seat !== undefined) {
      const roles = played.get(account) ?? new Map<string, string>();
      roles.set(seat.scope, seat.role);
      played.set(account, roles);
    }
    return account;
  };

  /**
   * Gives folders to the account (see hand-over.ts), and lets it pass through the folders
   * above them.
   */
  const grant = async (account: AgentAccount, folders: readonly string[]): Promise<void> => {
    await hand.give(account, folders);
    // Where epicflow is root, a step in the sandbox reaches its folders through a mount
    // namespace of its own (sandbox.ts `throughPassage`): no folder above them is opened.
    if (throughNamespace !== undefined) return;
    for (const dir of folders) {
      // Not there (yet): nothing was given.
      if ((await lstat(dir).catch(() => null)) !== null) await passage.let(dir, account);
    }
  };

  const run = async (
    argv: readonly string[],
    runOptions: UntrustedRunOptions,
  ): Promise<ProcessResult> => {
    const { writable: extra, ownHome, seat, veiled, ...processOptions } = runOptions;
    // In the kernel sandbox every step runs as the run's one user: the kernel keeps steps
    // apart (their processes, mounts, IPC, keyrings); outside it, a user of their own.
    const account = walled ? first : await take(seat);
    try {
      // A fresh folder for the step: its home (setup and gates), and its /tmp in the
      // sandbox; removed after it, so nothing one step planted there (an `.npmrc`) runs
      // in the next.
      const own = join(homeRoot, `${account.user}.${randomUUID()}`);
      const home =
        ownHome === true || runOptions.env['HOME'] === undefined ? join(own, 'home') : undefined;
      const tmp = walled ? join(own, 'tmp') : undefined;
      // Passable, not listable: what it holds is the account's own (no ACL entry to set).
      await mkdir(own, { mode: 0o711 });
      for (const dir of [home, tmp]) {
        if (dir !== undefined) await mkdir(dir, { recursive: true, mode: 0o700 });
      }
      const childEnv: Record<string, string> = {
        ...runOptions.env,
        ...(home === undefined ? {} : { HOME: home }),
        USER: account.user,
        LOGNAME: account.user,
        // Outside the sandbox the repository's git stays epicflow's: the agent's own git may
        // read it (git refuses a repository of another owner otherwise), and does not try to
        // write the index for a `git status` (it may not). In the sandbox its repository is
        // its own, and a status keeps what it learned of the files for the next one.
        ...(walled ? {} : { GIT_OPTIONAL_LOCKS: '0' }),
        ...(runOptions.env['GIT_CONFIG_COUNT'] === undefined
          ? { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' }
          : {}),
      };
      // A folder inside one handed over whole goes with it: the folders above it are the tree's.
      const trees = await Promise.all(
        withStartFolder(runOptions.cwd, extra ?? []).map((f) => inside(f)),
      );
      // In the sandbox, a step in a linked tree gets a repository of its own (made here,
      // given to the account with its other folders): the repository's is hidden there.
      const repository = walled ? await walls.repositoryFor(trees, join(own, 'git')) : undefined;
      const ownFolders: string[] = [];
      if (childEnv['HOME'] !== undefined) ownFolders.push(childEnv['HOME']);
      if (tmp !== undefined) ownFolders.push(tmp);
      if (repository !== undefined) ownFolders.push(repository.folder);
      const granted = [
        ...new Set([...trees, ...(await Promise.all(ownFolders.map((f) => inside(f))))]),
      ];
      await grant(account, granted);
      // Its objects are read where they are: the folders above them passable to it.
      if (repository !== undefined && throughNamespace === undefined) {
        for (const objects of repository.objects) await passage.let(objects, account);
      }
      const since = await hand.mark();
      const marker = randomUUID();
      childEnv[RUN_MARKER] = marker;
      let command = keyring === undefined ? argv : [...keyring.prefix, ...argv];
      Object.assign(childEnv, keyring?.env);
      let watch: NamespaceWatch | undefined;
      // The kills sent through sudo: done before the account runs its next step.
      const kills: Promise<unknown>[] = [];
      if (walled) {
        const step = await walls.step(argv, {
          cwd: runOptions.cwd,
          env: childEnv,
          writable: granted,
          home: childEnv['HOME'],
          tmp,
          as: {
            uid: account.uid,
            gid: account.gid,
            passes: (folder) => passage.passes(account, folder),
            throughNamespace,
          },
          veiled,
          repository,
        });
        command = step.argv;
        Object.assign(childEnv, step.env);
        watch = step.watch;
      }
      try {
        if (root.privilege === 'root') {
          return await runProcess(command, {
            ...processOptions,
            env: childEnv,
            // In the sandbox, the step's argv takes the user itself, once its mount
            // namespace is made (sandbox.ts).
            ...(throughNamespace !== undefined
              ? {}
              : { runAs: { uid: account.uid, gid: account.gid } }),
            ...(watch === undefined ? {} : { beforeKill: watch.beforeKill }),
          });
        }
        // sudo keeps the environment (-E) except what its policy always sets: PATH and HOME
        // are given again on the command line (they carry no secret).
        const fixed = ['HOME', 'PATH', 'USER', 'LOGNAME'].flatMap((k) =>
          childEnv[k] === undefined ? [] : [`${k}=${childEnv[k]}`],
        );
        return await runProcess(
          ['sudo', '-n', '-E', '-u', account.user, '--', '/usr/bin/env', ...fixed, ...command],
          {
            ...processOptions,
            env: childEnv,
            ...(watch === undefined ? {} : { beforeKill: watch.beforeKill }),
            // sudo runs as root: this process may not signal it; the user's own kill may.
            // In the sandbox, the step's namespace (its pid 1, checked by its start time: other
            // steps of the user run beside it); after the step ended by itself, nothing.
            kill: (sig) => {
              const init = watch?.found() ?? null;
              if (walled && init === null) return;
              const script =
                init === null
                  ? [`kill -${sig.replace(/^SIG/, '')} -1; true`]
                  : [KILL_NAMESPACE, 'sh', String(init.pid), init.started];
              kills.push(
                runProcess(['sudo', '-n', '-u', account.user, '--', '/bin/sh', '-c', ...script], {
                  cwd: '/',
                  env: root.env,
                  timeoutMs: 30_000,
                }),
              );
            },
          },
        );
      } finally {
        // Nothing of the step survives it: its processes, what it scheduled or left in /tmp, its hold on the folders.
        await Promise.all(kills);
        if (watch !== undefined) {
          // The kernel ended every process of the step with its PID namespace (awaited
          // after a kill); /tmp, /var/tmp and /dev/shm were the step's own, and cron's
          // and at's spools were not there to write: nothing is left to look for.
          await watch.settled();
        } else {
          await reapAccount(account, root);
          await dropLeftovers(account, root);
        }
        // The step's own home and /tmp go unread, as they are; the rest is taken back (a
        // tree given in the sandbox by its top alone: hand-over.ts).
        await hand.takeBack(
          granted.filter((dir) => !dir.startsWith(`${own}/`)),
          since,
          walled,
        );
        await rm(since, { force: true });
        await hand.discard([own]);
      }
    } finally {
      if (!walled) idle.push(account);
    }
  };

  const writer =
    throughNamespace === undefined
      ? undefined
      : agentTreeWriter(first, throughNamespace, homeRoot, (folders) => hand.discard(folders));

  return {
    isolated: true,
    walled,
    ...(writer === undefined ? {} : { writer }),
    description: `as the user ${first.user} (uid ${first.uid}), without sudo${walled ? ', inside the kernel sandbox (bubblewrap)' : ''}; every process of it is ended after each step${passage.open && throughNamespace === undefined ? '; the folders above its trees are opened to all users (install the acl package to open them to it alone)' : ''}`,
    run,
    runShell: (command, runOptions) => run(shellArgv(command, runOptions.env), runOptions),
    discard: async (folders) => hand.discard(await Promise.all(folders.map((f) => inside(f)))),
  };
}
