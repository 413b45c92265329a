import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { chmod, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answerKey } from '../../../src/adapters/state/answer-key.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'epicflow-key-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the answer key', () => {
  it('is made once, 32 random bytes only its owner may read, and read back the same', async () => {
    const state = join(root, 'epicflow');
    const first = await answerKey(state);
    expect(first).toHaveLength(32);
    expect((await stat(join(state, 'answer-key'))).mode & 0o777).toBe(0o600);
    expect(await answerKey(state)).toEqual(first);
    expect(await answerKey(join(root, 'other'))).not.toEqual(first);
  });

  it('refuses a key others may read, or a link planted in its place', async () => {
    const state = join(root, 'epicflow');
    await answerKey(state);
    const path = join(state, 'answer-key');
    await chmod(path, 0o644);
    await expect(answerKey(state)).rejects.toThrow(
      `refusing the answer key ${path}: others may read it (mode 644)`,
    );
    await rm(path);
    const known = join(root, 'known');
    await writeFile(known, Buffer.alloc(32));
    await symlink(known, path);
    await expect(answerKey(state)).rejects.toThrow(
      `refusing the answer key ${path}: it is a symbolic link`,
    );
    expect(await readFile(known)).toEqual(Buffer.alloc(32));
  });
});
