/**
 * The mode with no kernel sandbox: a machine whose kernel refuses user namespaces (Ubuntu
 * 23.10 and later without the AppArmor sysctl, a container without them). bubblewrap is
 * there and fails to start, as it does on such a kernel (played by a `bwrap` first on PATH
 * that answers as bubblewrap answers there). The run says so once, with the command that
 * allows them, and goes on with the walls it has: never silently without them.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  configYaml,
  epicMerges,
  makeRepo,
  planMarkdown,
  run,
  scriptedCoder,
  type TestRepo,
} from '../engine/support/repo.js';

let repo: TestRepo;
afterEach(() => repo?.cleanup());

describe('epicflow run where the kernel refuses user namespaces', () => {
  it('says once that the sandbox cannot run and how to allow it, then runs the epic without it', async () => {
    repo = makeRepo({ 'README.md': 'x\n' });
    const bin = join(repo.tmp, 'bin');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'bwrap'),
      '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n',
    );
    chmodSync(join(bin, 'bwrap'), 0o755);
    const coder = scriptedCoder(repo, 'coder', {
      a: { '*': { write: { 'src/a.txt': 'a\n' } } },
      b: { '*': { write: { 'src/b.txt': 'b\n' } } },
    });
    repo.write(
      'epicflow.yml',
      configYaml({ executors: [{ id: 'bot', command: coder }], gates: ['true'] }),
    );
    repo.commit('config');
    const out = await run(
      repo,
      planMarkdown([
        { id: 'a', owns: ['src/a.txt'] },
        { id: 'b', owns: ['src/b.txt'] },
      ]),
      // The default (the test helper opts out): in the sandbox where it runs.
      { sandbox: true },
      {
        env: {
          ...process.env,
          PATH: `${bin}:${process.env['PATH'] ?? ''}`,
          XDG_CONFIG_HOME: join(repo.tmp, 'xdg'),
        },
      },
    );
    expect(out.code).toBe(0);
    const said = `${out.stdout}${out.stderr}`;
    const warning =
      'warning: the kernel sandbox cannot run here: bubblewrap could not make a user namespace (bwrap: setting up uid map: Permission denied); allow unprivileged user namespaces: `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`';
    expect(said).toContain(warning);
    expect(said.split(warning)).toHaveLength(2);
    expect(said).toContain(
      '— the agent, setup and gates run without it (--no-sandbox silences this)',
    );
    expect(epicMerges(repo)).toEqual(['Merge story a: Story a', 'Merge story b: Story b']);
  });
});
