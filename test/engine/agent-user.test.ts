/**
 * `epicflow run --agent-user USER`: the agent, setup and gates run as that
 * unprivileged user (the tests run as root, so it can be had here); nothing it
 * starts outlives its step, not even a process that left its group and emptied
 * its environment; the merge is epicflow's, as epicflow's own user.
 *
 * @needs root
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  configYaml,
  epicMerges,
  git,
  makeRepo,
  planMarkdown,
  record,
  run,
  showFile,
  stateDir,
  type TestRepo,
} from './support/repo.js';
import { describeNeeding } from '../support/needs.js';
import { userAclEntries } from '../support/acl.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/**
 * A story in a package of the repository, checked in that package's folder by its own setup
 * and gate, which write beside it in the checkout (a workspace's shared `node_modules`): the
 * checkout the agent's steps wrote is handed to a package's command whole, never its folder
 * alone.
 */
async function packageStory(opts: { sandbox: boolean }): Promise<void> {
  repo = makeRepo({ 'README.md': 'x\n', 'packages/a/package.json': '{}\n' });
  const inPackage = 'test "$(basename "$PWD")" = a && test "$(id -un)" != root';
  repo.write(
    'epicflow.yml',
    configYaml({
      executors: [{ id: 'bot', command: ['sh', '-c', 'echo a > packages/a/a.txt'] }],
      gates: [],
      extra: [
        'packages:',
        '  - path: packages/a',
        `    setup: ${JSON.stringify(`${inPackage} && mkdir -p ../../.shared && touch ../../.shared/setup`)}`,
        `    gates: [${JSON.stringify(`${inPackage} && test -f ../../.shared/setup && touch ../../.shared/gate && test -f a.txt`)}]`,
      ].join('\n'),
    }),
  );
  repo.commit('config');
  const result = await run(repo, planMarkdown([{ id: 'a', owns: ['packages/a'] }]), {
    agentUser: 'epicflow-agent',
    sandbox: opts.sandbox,
  });
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  expect(epicMerges(repo)).toEqual(['Merge story a: Story a']);
  expect(record(repo, 'a')['notes']).toContain("checks ran for packages/a (with the root's)");
  const gates = readdirSync(join(stateDir(repo), 'logs', 'a'))
    .filter((f) => f.endsWith('-gates.log'))
    .map((f) => readFileSync(join(stateDir(repo), 'logs', 'a', f), 'utf8'))
    .join('\n');
  expect(gates).toContain('(in packages/a)');
  expect(gates).toContain('[passed]');
}

describe('a local run with --agent-user', () => {
  it('runs the agent and the gates as that user and ends what the agent left behind', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const pid = join(repo.tmp, 'left-behind.pid');
    const later = join(repo.tmp, 'left-behind.txt');
    const agent = [
      'sh',
      '-c',
      [
        'mkdir -p src',
        'id -un > src/agent.txt',
        // Out of its group and without the marker: only its uid gives it away.
        `setsid env -i sh -c 'sleep 2; id -un > ${later}' >/dev/null 2>&1 & echo $! > src/left-behind.pid`,
      ].join('; '),
    ];
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: agent }],
        gates: ['test "$(id -un)" != root'],
      }),
    );
    repo.commit('config');
    const result = await run(repo, planMarkdown([{ id: 's', owns: ['src'] }]), {
      agentUser: 'epicflow-agent',
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    // A user named: no note about who runs the agent (the default and --no-agent-user say so, below).
    expect(result.stdout).not.toContain('note:');
    expect(epicMerges(repo)).toEqual(['Merge story s: Story s']);
    expect(showFile(repo, 'epic/epic', 'src/agent.txt')).toMatch(/^epicflow-agent(-\d+)?$/);
    // The merge commit is epicflow's own.
    expect(git(repo.dir, 'log', '-1', '--format=%an', 'epic/epic')).not.toMatch(/agent/);
    const left = Number(showFile(repo, 'epic/epic', 'src/left-behind.pid'));
    expect(
      existsSync(`/proc/${left}/status`) &&
        !readFileSync(`/proc/${left}/status`, 'utf8').includes('State:\tZ'),
    ).toBe(false);
    await delay(2500);
    expect(existsSync(later)).toBe(false);
    expect(existsSync(pid)).toBe(false);
  }, 180_000);

  it("checks a package's story in the package's folder, its checkout handed whole", async () => {
    await packageStory({ sandbox: false });
  }, 180_000);

  it('gives stories that run side by side users of their own: one cannot write into the other', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    // Both agents meet (a folder anyone may write), then `a` writes into `b`'s tree and
    // record and tells `b`, which only then writes its own file and ends.
    const meet = join(repo.tmp, 'meet');
    mkdirSync(meet, { mode: 0o1777 });
    chmodSync(meet, 0o1777);
    const agent = [
      'sh',
      '-c',
      [
        'mkdir -p "src/$EPICFLOW_STORY"',
        `touch ${meet}/here-$EPICFLOW_STORY`,
        `i=0; while [ ! -e ${meet}/here-a ] || [ ! -e ${meet}/here-b ]; do i=$((i+1)); [ $i -gt 400 ] && exit 3; sleep 0.05; done`,
        'if [ "$EPICFLOW_STORY" = a ]; then',
        '  (echo pwned > ../b/src/b/evil.txt) 2>/dev/null && echo tree >> src/a/done.txt',
        '  (echo "{}" > ../../../epic/stories/b.json) 2>/dev/null && echo record >> src/a/done.txt',
        '  id -u >> src/a/done.txt',
        `  touch ${meet}/a-done`,
        'else',
        `  i=0; while [ ! -e ${meet}/a-done ]; do i=$((i+1)); [ $i -gt 400 ] && exit 3; sleep 0.05; done`,
        '  id -u > src/b/done.txt',
        'fi',
      ].join('\n'),
    ];
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: agent, slots: 2 }], gates: ['true'] }),
    );
    repo.commit('config');
    const result = await run(
      repo,
      planMarkdown([
        { id: 'a', owns: ['src/a'] },
        { id: 'b', owns: ['src/b'] },
      ]),
      { agentUser: 'epicflow-agent', concurrency: 2 },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const a = (showFile(repo, 'epic/epic', 'src/a/done.txt') ?? '').split('\n');
    const b = showFile(repo, 'epic/epic', 'src/b/done.txt');
    // Neither the tree nor the record of the other story could be written …
    expect(a.slice(0, -1)).toEqual([]);
    expect(showFile(repo, 'epic/epic', 'src/b/evil.txt')).toBeNull();
    expect(record(repo, 'b')).toMatchObject({ story: 'b', status: 'done' });
    // … because they ran as two users.
    expect(a.at(-1)).not.toBe(b);
  }, 270_000);

  it('runs the judge as a user and with a home of its own: what the coder planted never runs in it', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    // One executor plays both roles. The coder plants settings with a hook in its home and
    // a script in /tmp; the judge tells (through a folder anyone may write) who it runs
    // as and what it finds, and clears the story.
    const meet = join(repo.tmp, 'meet');
    mkdirSync(meet, { mode: 0o1777 });
    chmodSync(meet, 0o1777);
    const verdict = JSON.stringify({
      scores: { provides: 2, scope: 2, style: 2, tests: 2 },
      cleared: true,
      findings: [],
    });
    const agent = [
      'sh',
      '-c',
      [
        'if [ "$EPICFLOW_ROLE" = coder ]; then',
        '  mkdir -p src "$HOME/.claude" && id -un > src/coder.txt',
        `  echo '{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch ${meet}/hook"}]}]}}' > "$HOME/.claude/settings.json"`,
        '  echo coder-was-here > /tmp/epicflow-mark-$(id -u)',
        'else',
        `  id -un > ${meet}/judge.txt`,
        `  ls -a "$HOME" "$HOME/.claude" > ${meet}/judge-home.txt 2>&1`,
        `  cat /tmp/epicflow-mark-* > ${meet}/judge-tmp.txt 2>&1`,
        "  printf '```json\\n%s\\n```\\n' '" + verdict + "'",
        'fi',
      ].join('\n'),
    ];
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: agent, roles: ['coder', 'judge'] }],
        gates: ['true'],
        extra: 'judge: { executor: bot, rounds: 1 }',
      }),
    );
    repo.commit('config');
    const result = await run(repo, planMarkdown([{ id: 's', owns: ['src'] }]), {
      agentUser: 'epicflow-agent',
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const coder = showFile(repo, 'epic/epic', 'src/coder.txt')?.trim();
    const judge = readFileSync(join(meet, 'judge.txt'), 'utf8').trim();
    expect(coder).toMatch(/^epicflow-agent(-\d+)?$/);
    expect(judge).toMatch(/^epicflow-agent(-\d+)?$/);
    expect(judge).not.toBe(coder);
    expect(readFileSync(join(meet, 'judge-home.txt'), 'utf8')).not.toContain('settings.json');
    expect(readFileSync(join(meet, 'judge-tmp.txt'), 'utf8')).not.toContain('coder-was-here');
  }, 180_000);

  it('as root, runs the agent as an unprivileged user by default and says so; --no-agent-user says it runs as root', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const agent = ['sh', '-c', 'mkdir -p src && id -un > src/who.txt'];
    repo.write('epicflow.yml', configYaml({ executors: [{ id: 'bot', command: agent }] }));
    repo.commit('config');
    const isolated = await run(repo, planMarkdown([{ id: 's', owns: ['src'] }]), {
      agentUser: undefined,
    });
    expect(isolated.code).toBe(0);
    const note =
      'epicflow: note: epicflow runs as root, so the agent, setup and gates run as the unprivileged user epicflow-agent (made when missing); --agent-user USER picks another, --no-agent-user runs them as root';
    expect(isolated.stdout.split('\n').filter((l) => l === note)).toHaveLength(1);
    expect(showFile(repo, 'epic/epic', 'src/who.txt')).toMatch(/^epicflow-agent(-\d+)?$/);

    const asRoot = await run(repo, planMarkdown([{ id: 't', owns: ['src'] }]), {
      agentUser: false,
      epic: 'other',
    });
    expect(asRoot.code).toBe(0);
    expect(asRoot.stdout).toContain(
      'epicflow: note: the agent, setup and gates run as root (--no-agent-user): they can read and change everything on this machine',
    );
    expect(showFile(repo, 'epic/other', 'src/who.txt')).toBe('root');
    // A user named says nothing of it: the first test's run.
  }, 180_000);

  it('keeps a secret of the shell that started the run from the agent and the epic branch', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    // The agent looks everywhere it can: its environment, every process's environment
    // and command line it may read, and what its parent left open.
    const agent = [
      'sh',
      '-c',
      [
        'mkdir -p src',
        'env > src/env.txt',
        'cat /proc/[0-9]*/environ 2>/dev/null | tr "\\0" "\\n" > src/environs.txt',
        'cat /proc/[0-9]*/cmdline 2>/dev/null | tr "\\0" " " > src/cmdlines.txt',
        'true',
      ].join('; '),
    ];
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: agent }],
        gates: ['env'],
      }),
    );
    repo.commit('config');
    const secret = 'sk-shell-secret-5678';
    const result = await run(
      repo,
      planMarkdown([{ id: 's', owns: ['src'] }]),
      { agentUser: 'epicflow-agent' },
      { env: { ...process.env, OPENAI_API_KEY: secret, EPICFLOW_TEST_SECRET: secret } },
    );
    expect(result.code).toBe(0);
    // The agent ran and read what it could …
    expect(showFile(repo, 'epic/epic', 'src/env.txt')).toContain('EPICFLOW_STORY=s');
    expect(showFile(repo, 'epic/epic', 'src/environs.txt')).toContain('EPICFLOW_STORY=s');
    // … and the secret is nowhere on the epic branch.
    for (const file of ['src/env.txt', 'src/environs.txt', 'src/cmdlines.txt']) {
      expect({ file, leaked: showFile(repo, 'epic/epic', file)?.includes(secret) }).toEqual({
        file,
        leaked: false,
      });
    }
    // Nor in what the gates printed (kept in the story's logs).
    const logs = join(stateDir(repo), 'logs', 's');
    const gates = readdirSync(logs)
      .filter((f) => f.endsWith('-gates.log'))
      .map((f) => readFileSync(join(logs, f), 'utf8'))
      .join('\n');
    expect(gates).toContain('LOGNAME=epicflow-agent');
    expect(gates).not.toContain(secret);
  }, 180_000);

  it('refuses a user that is root, before anything is created', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    repo.write('epicflow.yml', configYaml({ executors: [{ id: 'bot', command: ['true'] }] }));
    repo.commit('config');
    const result = await run(repo, planMarkdown([{ id: 's', owns: ['src'] }]), {
      agentUser: 'root',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "the user root (uid 0) is root or epicflow's own user: untrusted code would run with epicflow's rights",
    );
    expect(git(repo.dir, 'branch', '--list', 'epic/*')).toBe('');
  });
});

describeNeeding(
  ['sandbox'],
  'a local run as root in the kernel sandbox (the default as root)',
  () => {
    it('runs stories side by side as the agent user in trees that are its from the start, and merges them', async () => {
      repo = makeRepo({ 'README.md': 'x\n' });
      // Each coder writes who it runs as and who owns a file of its fresh tree, then goes after
      // the tree's `.git` file (epicflow's: it may neither write nor move it).
      const agent = [
        'sh',
        '-c',
        [
          'mkdir -p "src/$EPICFLOW_STORY"',
          'out="src/$EPICFLOW_STORY/who.txt"',
          '{ id -un; stat -c %U README.md; } > "$out"',
          '(echo gitdir: /tmp > .git) 2>/dev/null && echo wrote-git >> "$out"',
          '(mv .git git-moved) 2>/dev/null && echo moved-git >> "$out"',
          // Its own git answers in its tree (a repository of the step's own), without
          // the token the repository's config holds.
          '{ git branch --show-current; git status --porcelain; git config --list; } > "src/$EPICFLOW_STORY/git.txt" 2>&1',
          // Its status kept the files' stat data in its index: the next one reads no file.
          'git ls-files --debug | grep -c "mtime: 0:0" > "src/$EPICFLOW_STORY/unrefreshed.txt"',
          'true',
        ].join('\n'),
      ];
      repo.write(
        'epicflow.yml',
        configYaml({
          executors: [{ id: 'bot', command: agent, slots: 2 }],
          // The gates' checkout, too, is the agent user's to write.
          gates: ['test "$(id -un)" != root && test "$(stat -c %U README.md)" = "$(id -un)"'],
          // What setup makes is not the story's: its git status leaves it out.
          setup: 'echo made > setup-made.txt',
        }),
      );
      repo.commit('config');
      git(
        repo.dir,
        'config',
        'http.https://github.com/.extraheader',
        'AUTHORIZATION: basic c2VrcmV0',
      );
      const result = await run(
        repo,
        planMarkdown([
          { id: 'a', owns: ['src/a'] },
          { id: 'b', owns: ['src/b'] },
        ]),
        { agentUser: 'epicflow-agent', sandbox: true, concurrency: 2 },
      );
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(epicMerges(repo).sort()).toEqual(['Merge story a: Story a', 'Merge story b: Story b']);
      for (const id of ['a', 'b']) {
        const [runAs, owner, ...rest] = (
          showFile(repo, 'epic/epic', `src/${id}/who.txt`) ?? ''
        ).split('\n');
        expect(runAs).toMatch(/^epicflow-agent(-\d+)?$/);
        expect({ owner, rest }).toEqual({ owner: runAs, rest: [] });
        const said = showFile(repo, 'epic/epic', `src/${id}/git.txt`) ?? '';
        // Its branch, then its change (the folder it made), then its config.
        expect(said.split('\n').slice(0, 2)).toEqual([`story/epic/${id}`, '?? src/']);
        expect(said).toContain('core.repositoryformatversion=0');
        expect(said).not.toMatch(/extraheader|c2VrcmV0|fatal/);
        expect(showFile(repo, 'epic/epic', `src/${id}/unrefreshed.txt`)).toBe('0');
      }
      // Root handed the trees through mount namespaces: no folder above them (the test's
      // own, closed to others) got an entry of the agent user's.
      expect(userAclEntries(repo.tmp)).toEqual([]);
    }, 180_000);

    it("checks a package's story in the package's folder of a tree that is the agent's", async () => {
      await packageStory({ sandbox: true });
    }, 180_000);
  },
);
