/**
 * What an untrusted step sees inside its kernel sandbox (bubblewrap: its own PID, mount,
 * IPC and UTS namespaces, no new privileges). One rule, in one place: the system's
 * folders read-only; the folders that hold the tools the step is started with read-only;
 * its own tree, home and writable folders read-write; a fresh `/tmp`; nothing else —
 * not the user's home, not the repository's `.git`, not epicflow's state, not the trees
 * and homes of other stories, not `/run` (sockets: docker, D-Bus), not the runner's
 * `_temp`. Pure: the adapter gathers the facts (which system folders exist and which of
 * them are links) and runs what this returns.
 */

/** A system folder as found on this machine. */
export interface SystemEntry {
  readonly path: string;
  /** `bin` → `usr/bin` on a merged-/usr system: recreated as the same link. */
  readonly linkTo?: string;
}

/** The folders every step reads (those that exist are bound; the adapter checks which). */
export const SYSTEM_FOLDERS: readonly string[] = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc',
  '/opt',
  '/nix',
  '/sys',
  // Name resolution where /etc/resolv.conf points into /run (systemd-resolved).
  '/run/systemd/resolve',
];

/** An entry inside a step's own folders that it must not see. */
export interface VeiledEntry {
  readonly path: string;
  readonly folder: boolean;
}

interface SandboxLayout {
  /** The system folders that exist, and which are links. */
  readonly system: readonly SystemEntry[];
  /** Folders of the tools the step starts (read-only). */
  readonly readable: readonly string[];
  /**
   * Folders never seen even where a readable folder holds them (the repository's `.git`,
   * epicflow's state and trees): an empty folder stands in their place.
   */
  readonly hidden?: readonly string[];
  /** Folders the step may change: its tree first (its working directory). */
  readonly writable: readonly string[];
  /**
   * Entries inside its own folders the step must not see (a CLI's project settings and
   * plugins in a tree someone else wrote last): a folder is covered by an empty one, a
   * file by an empty file; what is under them stays as it is, outside the step.
   */
  readonly veiled?: readonly VeiledEntry[];
  /** A fresh folder of this step's, seen as `/tmp` and `/var/tmp`; removed after it. */
  readonly tmp: string;
  readonly cwd: string;
  /** The step's HOME (one of `writable`, or a fresh folder of its own). */
  readonly home: string;
  /**
   * A repository of the step's own (its tree is a linked tree of the repository): its
   * `folder` seen where the tree's `.git` file leads (`at`), and the repository's object
   * folders (its own, then those it borrows from) read-only at their own paths; nothing
   * else of the repository's git folder.
   */
  readonly repository?: {
    readonly folder: string;
    readonly at: string;
    readonly objects: readonly string[];
  };
}

/** The bubblewrap arguments for `layout`, before `--` and the step's own argv. */
export function sandboxArgs(layout: SandboxLayout): string[] {
  const args = [
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    // The network stays: agents call their model's API; the credentials that matter are
    // not in the sandbox, and what it may reach on the network is its executor's key's.
    '--die-with-parent',
    // The step's first process is pid 1 of its namespace (`firstProcess`), not bubblewrap's
    // own init: bubblewrap then waits for it, and so for the whole namespace.
    '--as-pid-1',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--hostname',
    'sandbox',
  ];
  for (const entry of layout.system) {
    if (entry.linkTo !== undefined) args.push('--symlink', entry.linkTo, entry.path);
    else args.push('--ro-bind', entry.path, entry.path);
  }
  args.push('--proc', '/proc', '--dev', '/dev');
  // /tmp first: folders below it that are bound later are made inside the step's own.
  args.push('--bind', layout.tmp, '/tmp', '--bind', layout.tmp, '/var/tmp');
  const system = layout.system.map((e) => e.path);
  const readable = dedupe(layout.readable).filter((dir) => !system.some((s) => within(dir, s)));
  for (const dir of readable) args.push('--ro-bind', dir, dir);
  for (const dir of dedupe(layout.hidden ?? [])) {
    if (readable.some((r) => within(dir, r))) args.push('--tmpfs', dir);
  }
  // Last: its own folders, even inside a hidden one (its tree under epicflow's trees).
  const own = dedupe([...layout.writable, layout.home]);
  for (const dir of own) args.push('--bind', dir, dir);
  // After its own folders: what it must not see of them is covered.
  for (const entry of layout.veiled ?? []) {
    if (!own.some((dir) => entry.path !== dir && within(entry.path, dir))) continue;
    if (entry.folder) args.push('--tmpfs', entry.path);
    else args.push('--ro-bind', '/dev/null', entry.path);
  }
  // Inside the hidden git folder (an empty one stands there), or made where nothing is.
  const repository = layout.repository;
  if (repository !== undefined) {
    for (const objects of repository.objects) args.push('--ro-bind', objects, objects);
    args.push('--bind', repository.folder, repository.at);
  }
  args.push('--chdir', layout.cwd);
  return args;
}

/**
 * The step's argv behind its first process, pid 1 of its namespace: a shell that runs the
 * step in the foreground (its stdin and signals as they would be without it) and exits with
 * its status. The kernel lets a namespace's pid 1 exit only once every other process of the
 * namespace has ended, and bubblewrap (`--as-pid-1`) waits for it: so when bubblewrap exits,
 * nothing the step started runs any more. bubblewrap's own init would not do: its outer
 * process exits as soon as the step's command does, while the kernel is still ending the
 * rest (seen: a loop the step left in a session of its own still running after it).
 */
export function firstProcess(
  argv: readonly string[],
  /** What gives the step a session keyring of its own (`keyringOfItsOwn`), before its argv. */
  keyring: readonly string[] = [],
): string[] {
  return ['/bin/sh', '-c', '"$@"; exit $?', 'sh', ...keyring, ...argv];
}

/** The `keyctl` system call's number, by Node's name of the machine's architecture. */
const KEYCTL_SYSCALL: Readonly<Record<string, number>> = { x64: 250, arm64: 219 };

/**
 * An argv prefix that starts the step in a new, empty session keyring, then runs the step
 * in its place (same pid, stdin, signals and environment): a process inherits its parent's
 * session keyring across a change of uid and into a user namespace, and may read every key
 * it holds (a Kerberos ticket, a token a tool cached there) as its possessor, whoever owns
 * the key. Where the kernel refuses keyrings to the step altogether (no keyring support, a
 * seccomp filter), there is nothing to inherit and the step runs as it is; a refusal for
 * another reason (the user's key quota) fails the step, never runs it with epicflow's.
 * Perl (`perl-base`, part of every Debian and Ubuntu) makes the call; undefined where the
 * architecture's call number is not known. The step's environment gets `PERL_BADLANG=0`
 * (no locale warning on its stderr), which the prefix removes before the step starts.
 */
export function keyringOfItsOwn(perl: string, arch: string): string[] | undefined {
  const call = KEYCTL_SYSCALL[arch];
  if (call === undefined) return undefined;
  const script = [
    // KEYCTL_JOIN_SESSION_KEYRING (1) with no name: a new anonymous session keyring.
    `syscall(${String(call)}, 1, 0) >= 0 or $!{ENOSYS} or $!{EPERM}`,
    ` or die "epicflow: the step gets no session keyring of its own: $!\\n";`,
    ' delete $ENV{PERL_BADLANG};',
    ' exec { $ARGV[0] } @ARGV;',
    ' my $e = $!; my $c = $!{ENOENT} ? 127 : 126;',
    ' print STDERR "$ARGV[0]: $e\\n"; exit $c;',
  ].join('');
  return [perl, '-e', script, '--'];
}

/**
 * What a step may read to start: the folders of the tools on its `PATH` and of the
 * programs it names by absolute path — a `bin` folder brings its parent (a Node or
 * Python installation: `bin/` holds links into `lib/`), unless that parent is a home or
 * above one (`~/bin` brings only itself) — and the folder of each other absolute path on
 * its command line (a script and the modules beside it; a folder named brings itself).
 * Never `/`, a home, a folder above a home, or the shared temporary folders themselves.
 */
export function toolFolders(
  pathEntries: readonly string[],
  programs: readonly string[],
  homes: readonly string[],
  /** Absolute paths on the command line, each with whether it is a folder. */
  named: readonly { readonly path: string; readonly folder: boolean }[] = [],
): string[] {
  const unsafe = (dir: string): boolean =>
    dir === '/' ||
    homes.some((h) => h === dir || within(h, dir)) ||
    /^\/(home|root|tmp|var|var\/tmp|dev\/shm|run)$/.test(dir);
  const out: string[] = [];
  const add = (dir: string): void => {
    if (!dir.startsWith('/') || unsafe(dir)) return;
    const name = basename(dir);
    const parent = dirname(dir);
    out.push(
      (name === 'bin' || name === '.bin' || name === 'sbin') && !unsafe(parent) ? parent : dir,
    );
  };
  for (const entry of pathEntries) add(entry);
  for (const program of programs) if (program.startsWith('/')) add(dirname(program));
  for (const { path, folder } of named) {
    if (!path.startsWith('/')) continue;
    const dir = folder ? path : dirname(path);
    if (!unsafe(dir)) out.push(dir);
    else if (!folder && !unsafe(path)) out.push(path);
  }
  return dedupe(out);
}

/** Whether `dir` is `top` or inside it. */
function within(dir: string, top: string): boolean {
  return dir === top || dir.startsWith(top.endsWith('/') ? top : `${top}/`);
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function dirname(path: string): string {
  const at = path.lastIndexOf('/');
  return at <= 0 ? '/' : path.slice(0, at);
}

function dedupe(dirs: readonly string[]): string[] {
  return [...new Set(dirs)];
}

/** util-linux's programs a passage needs, by their paths on this machine. */
export interface NamespaceTools {
  readonly unshare: string;
  readonly setpriv: string;
  readonly mount: string;
}

/**
 * Folders a step's user reaches through a private mount namespace instead of through the
 * folders above them (where epicflow is root): `held` are the folders it is given (its
 * tree, home and `/tmp`, the tools it may read below the same closed folders), `covers`
 * the highest folders above them that are closed to it (a home, `/root`).
 */
interface Passage {
  readonly held: readonly { readonly path: string; readonly folder: boolean }[];
  readonly covers: readonly string[];
}

/**
 * The passage to `folders` through the `closed` folders above them: the highest closed
 * folders are covered, and every folder below one is held (outer ones first, so an inner
 * one is bound inside the outer one's own).
 */
export function passage(
  closed: ReadonlySet<string>,
  entries: readonly { readonly path: string; readonly folder: boolean }[],
): Passage {
  const under = (path: string, dir: string): boolean => path.startsWith(`${dir}/`);
  const covers = [...closed].filter((d) => ![...closed].some((o) => o !== d && under(d, o)));
  const seen = new Set<string>();
  const held = entries
    .filter((e) => covers.some((c) => under(e.path, c)) && !seen.has(e.path) && seen.add(e.path))
    .sort((a, b) => a.path.length - b.path.length);
  return { held, covers };
}

/**
 * An argv that runs `argv` as `user`, where root starts it, able to reach `held` without
 * any folder above them opened to that user: in a mount namespace of its own (`unshare`,
 * nothing seen outside), each held folder is opened first, then each cover is hidden under
 * an empty tmpfs, each held folder bound at its own path again from what was opened, and
 * only then the user taken (`setpriv`, no other groups). Everything else below a cover is
 * not there for the step; no folder of the machine is changed.
 */
export function throughPassage(
  user: { readonly uid: number; readonly gid: number },
  passage: Passage,
  argv: readonly string[],
  tools: NamespaceTools = { unshare: 'unshare', setpriv: 'setpriv', mount: 'mount' },
): string[] {
  const become = [
    tools.setpriv,
    `--reuid=${user.uid}`,
    `--regid=${user.gid}`,
    '--clear-groups',
    '--',
  ];
  // Nothing closed above the folders: no namespace to make.
  if (passage.covers.length === 0) return [...become, ...argv];
  const script = [
    'set -e',
    'MOUNT=$1 SETPRIV=$2; shift 2',
    'u=$1 g=$2 n=$3; shift 3',
    'held=("${@:1:n}"); shift "$n"',
    'c=$1; shift',
    'covers=("${@:1:c}"); shift "$c"',
    'shift',
    // Each held entry (`d:` a folder, `f:` a file, then its path) opened as fd 10, 11, …
    // (not close-on-exec, unlike `{var}` ones).
    'for i in "${!held[@]}"; do eval "exec $((i + 10))<\\"\\${held[i]:2}\\""; done',
    'for dir in "${covers[@]}"; do "$MOUNT" -t tmpfs -o mode=0755,size=1m epicflow "$dir"; done',
    'umask 022',
    'for i in "${!held[@]}"; do',
    '  if [ "${held[i]:0:1}" = d ]; then mkdir -p -- "${held[i]:2}"',
    '  else mkdir -p -- "$(dirname -- "${held[i]:2}")" && : > "${held[i]:2}"; fi',
    // Not canonicalized: mount would read the fd's link as a path, which leads into the cover.
    '  "$MOUNT" --no-canonicalize --bind "/proc/self/fd/$((i + 10))" "${held[i]:2}"',
    '  eval "exec $((i + 10))<&-"',
    'done',
    'exec "$SETPRIV" --reuid="$u" --regid="$g" --clear-groups -- "$@"',
  ].join('\n');
  return [
    tools.unshare,
    '--mount',
    '--propagation',
    'private',
    '--',
    '/bin/bash',
    '-c',
    script,
    'bash',
    tools.mount,
    tools.setpriv,
    String(user.uid),
    String(user.gid),
    String(passage.held.length),
    ...passage.held.map((h) => `${h.folder ? 'd' : 'f'}:${h.path}`),
    String(passage.covers.length),
    ...passage.covers,
    '--',
    ...argv,
  ];
}

/**
 * What tools are told in the sandbox, whose layout they would misread:
 *
 * - Go, in a step without a repository of its own (`gitWorks` false): the repository's git
 *   folder is out of the step's sight (its tree's `.git` file leads nowhere), and Go stamps
 *   a main package's build with the version control status it reads there: `go build
 *   ./...` stopped at "error obtaining VCS status" on every check of a repository with a
 *   command in it. `-buildvcs=false` is added to `GOFLAGS`; it leaves out the metadata a
 *   binary carries (`go version -m`), nothing a test sees.
 * - pnpm: the tree is a mount of its own, and pnpm keeps its store on the tree's device, at
 *   the top of that mount when no home is there: a `.pnpm-store` of the whole install in
 *   the tree (8,332 files beside `node_modules` for a small package), set aside from the
 *   story's commits and copied with setup's files. Its store goes in the step's home
 *   unless the step's environment names one: pnpm 11 and later read
 *   `pnpm_config_store_dir`; pnpm up to 10 reads `npm_config_store_dir`, which npm answers
 *   with "Unknown env config" on every command, so it is set only in a tree of pnpm's
 *   (`pnpmTree`: its lockfile, workspace file or `packageManager` says so).
 */
export function toolsInTheSandbox(
  env: Readonly<Record<string, string | undefined>>,
  home: string,
  facts: { readonly gitWorks: boolean; readonly pnpmTree: boolean },
): Record<string, string> {
  const store = `${home}/.local/share/pnpm/store`;
  const named =
    env['npm_config_store_dir'] !== undefined || env['pnpm_config_store_dir'] !== undefined;
  return {
    ...(facts.gitWorks ? {} : { GOFLAGS: withoutVcsStamping(env['GOFLAGS']) }),
    ...(named ? {} : { pnpm_config_store_dir: store }),
    ...(named || !facts.pnpmTree ? {} : { npm_config_store_dir: store }),
  };
}

/** `GOFLAGS` with `-buildvcs=false`, once, the other flags kept. */
function withoutVcsStamping(goflags: string | undefined): string {
  const flags = (goflags ?? '').split(/\s+/).filter((f) => f !== '' && !f.startsWith('-buildvcs'));
  return [...flags, '-buildvcs=false'].join(' ');
}
