import { describe, expect, it } from '@jest/globals';
import {
  firstProcess,
  keyringOfItsOwn,
  passage,
  sandboxArgs,
  throughPassage,
  toolFolders,
  toolsInTheSandbox,
} from '../../src/core/sandbox.js';

describe('what a sandboxed step may read to start', () => {
  const homes = ['/home/dev'];

  it('brings a bin folder’s installation, never a home or what is above one', () => {
    expect(
      toolFolders(
        [
          '/home/dev/.nvm/versions/node/v20/bin',
          '/home/dev/bin',
          '/home/dev/project/node_modules/.bin',
          '/usr/local/bin',
          'relative/bin',
          '/',
          '/home',
        ],
        [],
        homes,
      ),
    ).toEqual([
      '/home/dev/.nvm/versions/node/v20',
      '/home/dev/bin',
      '/home/dev/project/node_modules',
      '/usr/local',
    ]);
  });

  it('brings a program named by its path, and the folder of each file its command names', () => {
    expect(
      toolFolders([], ['/opt/agent/bin/agent'], homes, [
        { path: '/srv/scripts/coder.mjs', folder: false },
        { path: '/srv/data', folder: true },
        // Beside a home or in /tmp itself: only the file.
        { path: '/home/dev/agent.mjs', folder: false },
        { path: '/tmp/agent.mjs', folder: false },
        { path: '/tmp', folder: true },
        { path: '/home/dev', folder: true },
      ]),
    ).toEqual(['/opt/agent', '/srv/scripts', '/srv/data', '/home/dev/agent.mjs', '/tmp/agent.mjs']);
  });
});

describe('the walls of a step', () => {
  const args = sandboxArgs({
    system: [{ path: '/usr' }, { path: '/bin', linkTo: 'usr/bin' }, { path: '/etc' }],
    readable: ['/usr/local', '/home/dev/.nvm/versions/node/v20'],
    writable: ['/repo/.git/epicflow/trees/a', '/repo/.git/epicflow/homes/a/coder'],
    tmp: '/scratch/1/tmp',
    cwd: '/repo/.git/epicflow/trees/a',
    home: '/repo/.git/epicflow/homes/a/coder',
  });
  const pairs = (flag: string): string[] =>
    args.flatMap((a, i) => (a === flag ? [`${args[i + 1]}->${args[i + 2]}`] : []));

  it('hides epicflow’s folders inside a folder it may read, and still gives it its own tree', () => {
    const walled = sandboxArgs({
      system: [{ path: '/usr' }],
      readable: ['/repo'],
      hidden: ['/repo/.git', '/elsewhere'],
      writable: ['/repo/.git/epicflow/trees/a'],
      tmp: '/scratch/1/tmp',
      cwd: '/repo/.git/epicflow/trees/a',
      home: '/scratch/1/home',
    }).join(' ');
    expect(walled).toContain(
      '--ro-bind /repo /repo --tmpfs /repo/.git --bind /repo/.git/epicflow/trees/a /repo/.git/epicflow/trees/a',
    );
    // Not under anything it may read: nothing to hide.
    expect(walled).not.toContain('/elsewhere');
  });

  it('veils what it must not see of its own folders, after they are bound, and nothing else', () => {
    const veiled = sandboxArgs({
      system: [{ path: '/usr' }],
      readable: [],
      writable: ['/trees/a'],
      veiled: [
        { path: '/trees/a/.opencode', folder: true },
        { path: '/trees/a/.env', folder: false },
        // Its tree itself, or anything outside its folders: left as it is.
        { path: '/trees/a', folder: true },
        { path: '/etc/passwd', folder: false },
      ],
      tmp: '/scratch/1/tmp',
      cwd: '/trees/a',
      home: '/scratch/1/home',
    }).join(' ');
    expect(veiled).toContain(
      '--bind /trees/a /trees/a --bind /scratch/1/home /scratch/1/home --tmpfs /trees/a/.opencode --ro-bind /dev/null /trees/a/.env --chdir /trees/a',
    );
    expect(veiled).not.toContain('--tmpfs /trees/a ');
    expect(veiled).not.toContain('/etc/passwd');
  });

  it("shows its repository where its tree's .git leads, and of the git folder only the objects, read-only", () => {
    const walled = sandboxArgs({
      system: [{ path: '/usr' }],
      readable: ['/repo'],
      hidden: ['/repo/.git'],
      writable: ['/repo/.git/epicflow/trees/a'],
      veiled: [{ path: '/repo/.git/epicflow/trees/a/.env', folder: false }],
      tmp: '/scratch/1/tmp',
      cwd: '/repo/.git/epicflow/trees/a',
      home: '/scratch/1/home',
      repository: {
        folder: '/scratch/1/git',
        at: '/repo/.git/worktrees/a',
        objects: ['/repo/.git/objects', '/cache/reference.git/objects'],
      },
    }).join(' ');
    // After the git folder is hidden and its own folders are bound and veiled.
    expect(walled).toContain(
      '--tmpfs /repo/.git --bind /repo/.git/epicflow/trees/a /repo/.git/epicflow/trees/a --bind /scratch/1/home /scratch/1/home --ro-bind /dev/null /repo/.git/epicflow/trees/a/.env --ro-bind /repo/.git/objects /repo/.git/objects --ro-bind /cache/reference.git/objects /cache/reference.git/objects --bind /scratch/1/git /repo/.git/worktrees/a --chdir',
    );
    expect(walled).not.toMatch(/--bind \/repo\/\.git\/objects/);
  });

  it('has namespaces of its own and no capabilities, and ends with its parent', () => {
    for (const flag of [
      '--unshare-user',
      '--unshare-pid',
      '--unshare-ipc',
      '--die-with-parent',
      '--as-pid-1',
      '--new-session',
    ]) {
      expect(args).toContain(flag);
    }
    expect(args.join(' ')).toContain('--cap-drop ALL');
    expect(args).not.toContain('--share-net-none');
  });

  it('reads the system, writes only its tree and home, and has a /tmp of its own', () => {
    expect(pairs('--ro-bind')).toEqual([
      '/usr->/usr',
      '/etc->/etc',
      // Inside a system folder already there: not bound twice.
      '/home/dev/.nvm/versions/node/v20->/home/dev/.nvm/versions/node/v20',
    ]);
    expect(pairs('--symlink')).toEqual(['usr/bin->/bin']);
    expect(pairs('--bind')).toEqual([
      '/scratch/1/tmp->/tmp',
      '/scratch/1/tmp->/var/tmp',
      '/repo/.git/epicflow/trees/a->/repo/.git/epicflow/trees/a',
      '/repo/.git/epicflow/homes/a/coder->/repo/.git/epicflow/homes/a/coder',
    ]);
    expect(args.slice(-2)).toEqual(['--chdir', '/repo/.git/epicflow/trees/a']);
  });
});

describe("a step's session keyring of its own", () => {
  it("joins a new one with the architecture's keyctl call, then runs the step in its place", () => {
    const x64 = keyringOfItsOwn('/usr/bin/perl', 'x64');
    expect(x64?.slice(0, 2)).toEqual(['/usr/bin/perl', '-e']);
    expect(x64?.[2]).toMatch(/^syscall\(250, 1, 0\) >= 0 or \$!\{ENOSYS\} or \$!\{EPERM\} or die/);
    expect(x64?.at(-1)).toBe('--');
    expect(keyringOfItsOwn('/usr/bin/perl', 'arm64')?.[2]).toMatch(/^syscall\(219, 1, 0\)/);
  });

  it('is none where the call is not known', () => {
    expect(keyringOfItsOwn('/usr/bin/perl', 'riscv64')).toBeUndefined();
  });

  it('comes between the first process and the step', () => {
    expect(firstProcess(['node', 'a.js'], ['perl', '-e', 'x', '--'])).toEqual([
      '/bin/sh',
      '-c',
      '"$@"; exit $?',
      'sh',
      'perl',
      '-e',
      'x',
      '--',
      'node',
      'a.js',
    ]);
  });
});

describe("root's passage to a step's folders, through a mount namespace", () => {
  const d = (path: string) => ({ path, folder: true });

  it('covers the highest closed folders, and holds what lies below them, outer ones first', () => {
    const closed = new Set(['/root', '/root/proj/.git/epicflow', '/srv/closed']);
    expect(
      passage(closed, [
        d('/root/proj/.git/epicflow/trees/s1'),
        d('/root/proj/.git/epicflow/trees/s1'),
        d('/root/proj/.git/epicflow'),
        d('/usr/local/node'),
        { path: '/srv/closed/run.sh', folder: false },
      ]),
    ).toEqual({
      covers: ['/root', '/srv/closed'],
      held: [
        { path: '/srv/closed/run.sh', folder: false },
        d('/root/proj/.git/epicflow'),
        d('/root/proj/.git/epicflow/trees/s1'),
      ],
    });
  });

  it('holds nothing and covers nothing where every folder above is open to the user: the user is taken, no namespace made', () => {
    const open = passage(new Set(), [d('/srv/trees/s1')]);
    expect(open).toEqual({ covers: [], held: [] });
    expect(throughPassage({ uid: 7, gid: 8 }, open, ['true'])).toEqual([
      'setpriv',
      '--reuid=7',
      '--regid=8',
      '--clear-groups',
      '--',
      'true',
    ]);
  });

  it('takes the user in the namespace, after the covers and the binds, with no other groups', () => {
    const argv = throughPassage(
      { uid: 1001, gid: 1002 },
      { covers: ['/root'], held: [d('/root/t'), { path: '/root/x.sh', folder: false }] },
      ['bwrap', '--', 'true'],
    );
    expect(argv.slice(0, 6)).toEqual([
      'unshare',
      '--mount',
      '--propagation',
      'private',
      '--',
      '/bin/bash',
    ]);
    expect(argv.slice(8)).toEqual([
      'bash',
      'mount',
      'setpriv',
      '1001',
      '1002',
      '2',
      'd:/root/t',
      'f:/root/x.sh',
      '1',
      '/root',
      '--',
      'bwrap',
      '--',
      'true',
    ]);
    const script = argv[7] ?? '';
    const order = ['"$MOUNT" -t tmpfs', '"$MOUNT" --no-canonicalize --bind', 'exec "$SETPRIV"'].map(
      (s) => script.indexOf(s),
    );
    expect(order.every((at, i) => at > (order[i - 1] ?? 0))).toBe(true);
    expect(script).toContain('--clear-groups');
  });
});

describe('what tools are told in the sandbox', () => {
  const goflags = (env: Record<string, string>) =>
    toolsInTheSandbox(env, '/h', { gitWorks: false, pnpmTree: false })['GOFLAGS'];

  it("Go: the step's GOFLAGS kept, VCS stamping turned off, once", () => {
    expect(goflags({})).toBe('-buildvcs=false');
    expect(goflags({ GOFLAGS: '' })).toBe('-buildvcs=false');
    expect(goflags({ GOFLAGS: '-mod=vendor  -trimpath' })).toBe(
      '-mod=vendor -trimpath -buildvcs=false',
    );
    expect(goflags({ GOFLAGS: '-buildvcs=true -mod=mod' })).toBe('-mod=mod -buildvcs=false');
  });

  it('Go: a step with a repository of its own stamps its builds as it would outside', () => {
    expect(
      toolsInTheSandbox({ GOFLAGS: '-mod=vendor' }, '/h', { gitWorks: true, pnpmTree: false })[
        'GOFLAGS'
      ],
    ).toBeUndefined();
  });

  it("pnpm: its store in the step's home, unless the step names one; npm hears of it only in pnpm's trees", () => {
    const store = '/steps/1/home/.local/share/pnpm/store';
    const told = (pnpmTree: boolean, env: Record<string, string> = {}) =>
      toolsInTheSandbox(env, '/steps/1/home', { gitWorks: true, pnpmTree });
    expect(told(true)).toEqual({ npm_config_store_dir: store, pnpm_config_store_dir: store });
    // npm says "Unknown env config" of an npm_config_ it does not know, on every command.
    expect(told(false)).toEqual({ pnpm_config_store_dir: store });
    for (const named of ['npm_config_store_dir', 'pnpm_config_store_dir']) {
      expect(told(true, { [named]: '/cache/pnpm' })).toEqual({});
    }
  });
});
