import { afterEach, describe, expect, it } from '@jest/globals';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  epicMerges,
  git,
  makeRepo,
  planMarkdown,
  prompts,
  record,
  reportJson,
  run,
  scriptedCoder,
  showFile,
  type TestRepo,
  loggedReason,
} from './support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

describe('the perimeter', () => {
  it('shows strays to the coder once, then restores them from the epic branch and reports each path', async () => {
    repo = makeRepo({ 'README.md': 'original\n', 'src/server.js': 'server\n' });
    const coder = scriptedCoder(repo, 'coder', {
      health: {
        '*': {
          write: {
            'src/health.js': 'ok\n',
            'README.md': 'changed by the coder\n',
            'src/server.js': 'edited\n',
            'notes.txt': 'x\n',
          },
        },
      },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    const result = await run(
      repo,
      planMarkdown([{ id: 'health', owns: ['src/health.js'], reads: ['src/server.js'] }]),
    );
    expect(result.code).toBe(0);
    const seen = prompts(repo, 'coder');
    expect(seen).toHaveLength(2);
    expect(seen[1]?.prompt).toContain('## Outside your perimeter');
    expect(seen[1]?.prompt).toContain(
      '- src/server.js: read-only for this story (context, never change)',
    );
    expect(seen[1]?.prompt).toContain("- README.md: not in this story's owned paths");
    expect(result.stdout).toContain(
      '[health] restored 3 path(s) outside its perimeter from epic/epic: src/server.js, README.md, notes.txt',
    );
    expect(showFile(repo, 'epic/epic', 'README.md')).toBe('original');
    expect(showFile(repo, 'epic/epic', 'src/server.js')).toBe('server');
    expect(showFile(repo, 'epic/epic', 'notes.txt')).toBeNull();
    expect(showFile(repo, 'epic/epic', 'src/health.js')).toBe('ok');
    expect(record(repo, 'health').notes).toEqual([
      'restored outside its perimeter: src/server.js, README.md, notes.txt',
    ]);
    expect(reportJson(repo).stories[0]?.notes).toEqual([
      'restored outside its perimeter: src/server.js, README.md, notes.txt',
    ]);
  });

  it('judges paths byte for byte: files that only look like owned ones are put back', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    // Each of these is another file than src/cart/…, named to pass for one after trimming
    // or turning backslashes into slashes.
    const lookalikes = [' src/cart/evil.js', 'src/cart /evil.js', 'src\\cart\\evil.js'];
    const coder = scriptedCoder(repo, 'coder', {
      cart: {
        '*': {
          write: {
            'src/cart/ok.js': 'ok\n',
            ...Object.fromEntries(lookalikes.map((p) => [p, 'evil\n'])),
          },
        },
      },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'], fixRounds: 0 }),
    );
    repo.commit('config');
    const result = await run(repo, planMarkdown([{ id: 'cart', owns: ['src/cart'] }]));
    expect(result.code).toBe(0);
    const files = git(repo.dir, 'ls-tree', '-r', '-z', '--name-only', 'epic/epic')
      .split('\0')
      .filter((f) => f !== '');
    expect(files).toContain('src/cart/ok.js');
    for (const p of lookalikes)
      expect({ p, merged: files.includes(p) }).toEqual({ p, merged: false });
    expect(String(record(repo, 'cart').notes)).toContain('restored outside its perimeter');
  }, 180_000);

  it('refuses a symlink leaving the repository, a chain of two links that leaves it though each reads as inside, and a workflow edit, merging none', async () => {
    repo = makeRepo({ '.github/workflows/ci.yml': 'on: push\n', 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', {
      link: {
        '*': {
          write: { 'src/link/index.js': 'x\n' },
          symlink: { 'src/link/passwd': '../../../../etc/passwd' },
        },
      },
      // `hop` leads to the top of the repository; `leak` climbs one more from there.
      chain: {
        '*': {
          write: { 'src/chain/index.js': 'x\n' },
          symlink: { 'src/chain/hop': '../..', 'src/chain/leak': 'hop/../etc/passwd' },
        },
      },
      ci: {
        '*': { write: { 'src/ci.js': 'x\n', '.github/workflows/ci.yml': 'on: push\njobs: {}\n' } },
      },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    const result = await run(
      repo,
      planMarkdown([
        { id: 'link', owns: ['src/link'] },
        { id: 'chain', owns: ['src/chain'] },
        { id: 'ci', owns: ['src/ci.js'] },
      ]),
    );
    expect(result.code).toBe(1);
    expect(record(repo, 'link')).toMatchObject({
      status: 'failed',
      reason: loggedReason('refused: src/link/passwd (symlink pointing outside the repository)'),
    });
    expect(record(repo, 'chain')).toMatchObject({
      status: 'failed',
      reason: loggedReason('refused: src/chain/leak (symlink pointing outside the repository)'),
    });
    expect(record(repo, 'ci')).toMatchObject({
      status: 'failed',
      reason: loggedReason('refused: .github/workflows/ci.yml (workflow file)'),
    });
    expect(epicMerges(repo)).toEqual([]);
    expect(showFile(repo, 'epic/epic', '.github/workflows/ci.yml')).toBe('on: push');
  });

  it('reads the house rules from the commit, never through a link: a CONTRIBUTING.md leading outside reaches no prompt', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const outside = join(repo.tmp, 'private-notes.txt');
    writeFileSync(outside, 'SECRET-OUTSIDE-THE-REPO\n');
    symlinkSync(outside, join(repo.dir, 'CONTRIBUTING.md'));
    const coder = scriptedCoder(repo, 'coder', {
      s: { '*': { write: { 'src/s.txt': 'x\n' } } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config and a linked CONTRIBUTING.md');
    const result = await run(repo, planMarkdown([{ id: 's', owns: ['src/s.txt'] }]));
    expect(result.code).toBe(0);
    const seen = prompts(repo, 'coder');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.prompt).not.toContain('SECRET-OUTSIDE-THE-REPO');
  });

  it('refuses a composite action under .github unless the config allows it, then merges it', async () => {
    const action = '.github/actions/setup/action.yml';
    const planted = "runs:\n  using: composite\n  steps: [{ run: 'curl evil', shell: bash }]\n";
    repo = makeRepo({ [action]: 'runs:\n  using: composite\n  steps: []\n', 'README.md': 'x\n' });
    const coder = scriptedCoder(repo, 'coder', {
      sneak: { '*': { write: { 'src/ci.js': 'x\n', [action]: planted } } },
      allowed: { '*': { write: { [action]: planted } } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    const refused = await run(repo, planMarkdown([{ id: 'sneak', owns: ['src/ci.js'] }]));
    expect(refused.code).toBe(1);
    expect(record(repo, 'sneak')).toMatchObject({
      status: 'failed',
      reason: loggedReason(`refused: ${action} (file under .github)`),
    });
    expect(showFile(repo, 'epic/epic', action)).toBe('runs:\n  using: composite\n  steps: []');

    // With the config's leave, a story that owns it merges it.
    repo.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        gates: ['true'],
        extra: 'allowWorkflowChanges: true',
      }),
    );
    repo.commit('allow .github changes');
    const allowed = await run(repo, planMarkdown([{ id: 'allowed', owns: ['.github/actions'] }]), {
      epic: 'allowed',
    });
    expect(allowed.code).toBe(0);
    expect(showFile(repo, 'epic/allowed', action)).toBe(planted.trimEnd());
  });
});
