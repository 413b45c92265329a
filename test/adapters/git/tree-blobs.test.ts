/** A commit's files and their bytes, read from git's objects (a story's starting code). */
import { afterEach, describe, expect, it } from '@jest/globals';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Git } from '../../../src/adapters/git/index.js';
import { IDENTITY, makeRepo, type Fixture } from './repo-fixture.js';

let repo: Fixture | undefined;
afterEach(() => repo?.cleanup());

describe('a commit read from its objects', () => {
  it('lists every entry with its mode, object and size, links and odd names included', async () => {
    repo = makeRepo({ 'README.md': 'hello\n', 'src/a b.ts': 'export {};\n' });
    symlinkSync('/etc/passwd', join(repo.dir, 'src/link'));
    writeFileSync(join(repo.dir, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    const head = repo.commitAll('more');
    const git = await Git.open(repo.dir, IDENTITY);
    const files = await git.treeFiles(head);
    const of = (path: string) => files.find((f) => f.path === path);
    expect(files.map((f) => f.path)).toEqual(['README.md', 'run.sh', 'src/a b.ts', 'src/link']);
    expect(of('README.md')).toMatchObject({ mode: '100644', size: 6 });
    expect(of('README.md')?.object).toBe(repo.git('rev-parse', `${head}:README.md`).trim());
    expect(of('run.sh')?.mode).toBe('100755');
    expect(of('src/link')).toMatchObject({ mode: '120000', size: '/etc/passwd'.length });
  });

  it('reads blobs byte for byte (binary and not UTF-8 alike), and leaves out ids it has no blob for', async () => {
    repo = makeRepo({ 'README.md': 'hello\n' });
    const bytes = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x00, 0x0a, 0xff]);
    writeFileSync(join(repo.dir, 'data.bin'), bytes);
    const head = repo.commitAll('data');
    const git = await Git.open(repo.dir, IDENTITY);
    const files = await git.treeFiles(head);
    const ids = files.map((f) => f.object);
    const unknown = 'f'.repeat(40);
    const tree = repo.git('rev-parse', `${head}^{tree}`).trim();
    const blobs = await git.readBlobs([...ids, unknown, tree, ids[0] as string]);
    expect(blobs.size).toBe(2);
    const of = (path: string): Buffer =>
      Buffer.from(blobs.get(files.find((f) => f.path === path)?.object ?? '') ?? []);
    expect(of('data.bin').equals(bytes)).toBe(true);
    expect(of('README.md').toString('utf8')).toBe('hello\n');
    await expect(git.readBlobs(['HEAD:README.md'])).rejects.toThrow('invalid object id');
  });
});
