/**
 * The repository's answer key: 32 random bytes kept judge and verifier answers are sealed
 * with (core/judge/reuse.ts), in epicflow's state folder as `answer-key`, mode 0600, made
 * once per repository. An agent running as another user cannot read it, nor can one in
 * the kernel sandbox (the state folder is hidden there); without either, the agent runs
 * as you and can (docs/security.md says so).
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, mkdir, open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EpicflowError } from '../../core/errors.js';

const KEY_FILE = 'answer-key';
const KEY_BYTES = 32;

function errnoCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/** Reads the key, never through a link; a file another user owns or may read is refused. */
async function readKey(path: string): Promise<Uint8Array | null> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return null;
    throw refused(path, errnoCode(e) === 'ELOOP' ? 'it is a symbolic link' : String(e));
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw refused(path, 'it is not a file');
    if (stat.uid !== process.getuid?.()) throw refused(path, `it belongs to uid ${stat.uid}`);
    if ((stat.mode & 0o077) !== 0) {
      throw refused(path, `others may read it (mode ${(stat.mode & 0o777).toString(8)})`);
    }
    const key = await handle.readFile();
    if (key.length !== KEY_BYTES) throw refused(path, `it holds ${key.length} bytes, not 32`);
    return key;
  } finally {
    await handle.close();
  }
}

function refused(path: string, why: string): EpicflowError {
  return new EpicflowError('state', `refusing the answer key ${path}: ${why}`, {
    details: [
      'epicflow makes this file itself (mode 0600); remove it and run again',
      'answers kept under the old key are asked again',
    ],
  });
}

/** The key in `stateRoot` (epicflow's state folder of the repository), made when missing. */
export async function answerKey(stateRoot: string): Promise<Uint8Array> {
  const path = join(stateRoot, KEY_FILE);
  const found = await readKey(path);
  if (found !== null) return found;
  await mkdir(stateRoot, { recursive: true });
  // Written whole beside it, then linked in: a run starting at the same moment reads
  // either no key or the whole of the one that won.
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temp, randomBytes(KEY_BYTES), { flag: 'wx', mode: 0o600 });
    await link(temp, path).catch((e: unknown) => {
      if (errnoCode(e) !== 'EEXIST') throw e;
    });
  } finally {
    await rm(temp, { force: true });
  }
  const made = await readKey(path);
  if (made === null) throw refused(path, 'it vanished as it was made');
  return made;
}
