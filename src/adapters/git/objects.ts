/**
 * Reads and writes of git's objects that need no work tree: a commit's tree listing, blobs by
 * id, ancestry and commits written from trees. `Git` (the repository with its checkout) and
 * `PublishGit` (a bare repository) call these with their runner.
 */
import { EpicflowError } from '../../core/errors.js';
import type { TreeFile } from '../../core/prompt/starting-code.js';
import { checkRefName, splitNul } from './listings.js';
import { gitError, type GitRunner } from './run-git.js';

/** A full object id (SHA-1 or SHA-256), as epicflow names objects it reads by id. */
export const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * Every entry of a commit's tree, recursively, with its mode, object id and size
 * (`ls-tree -r -l`), read from git's objects: no link in a tree is ever followed.
 */
export async function treeFiles(git: GitRunner, commit: string): Promise<TreeFile[]> {
  checkRefName(commit);
  const out = await git.run(`cannot list the files of ${commit}`, [
    'ls-tree',
    '-r',
    '-l',
    '-z',
    '--full-tree',
    commit,
  ]);
  return splitNul(out).map((record) => {
    // "<mode> SP <type> SP <object> SP+ <size or -> TAB <path>"
    const tab = record.indexOf('\t');
    const [mode = '', , object = '', size = ''] = record.slice(0, tab).split(/ +/);
    return { path: record.slice(tab + 1), mode, object, size: Number(size) || 0 };
  });
}

/**
 * Blobs by object id, byte for byte (`cat-file --batch`: no filter, no textconv, no path,
 * so nothing in a work tree is read); an id that names no blob is absent from the answer.
 */
export async function readBlobs(
  git: GitRunner,
  objects: readonly string[],
): Promise<Map<string, Uint8Array>> {
  const ids = [...new Set(objects)];
  for (const id of ids) {
    if (!OBJECT_ID.test(id)) {
      throw new EpicflowError('git', `invalid object id: ${JSON.stringify(id)}`);
    }
  }
  const blobs = new Map<string, Uint8Array>();
  if (ids.length === 0) return blobs;
  const r = await git.try(['cat-file', '--batch'], {
    input: `${ids.join('\n')}\n`,
    bytes: true,
  });
  if (r.exitCode !== 0) throw gitError('cannot read blobs', r);
  const out = r.stdoutBytes ?? Buffer.alloc(0);
  // Each answer: "<object> SP <type> SP <size> LF <content> LF", or "<name> SP missing LF".
  for (let at = 0; at < out.length;) {
    const eol = out.indexOf(0x0a, at);
    if (eol < 0) break;
    const [object = '', type = '', size = ''] = out.subarray(at, eol).toString('utf8').split(' ');
    at = eol + 1;
    const length = Number(size);
    if (type === 'missing' || type === 'ambiguous' || !Number.isInteger(length)) continue;
    if (type === 'blob') blobs.set(object, out.subarray(at, at + length));
    at += length + 1;
  }
  return blobs;
}

/** True when `ancestor` is `descendant` or one of its ancestors. */
export async function isAncestor(
  git: GitRunner,
  ancestor: string,
  descendant: string,
): Promise<boolean> {
  checkRefName(ancestor);
  checkRefName(descendant);
  const r = await git.try(['merge-base', '--is-ancestor', ancestor, descendant]);
  if (r.exitCode === 0) return true;
  if (r.exitCode === 1) return false;
  throw gitError(`cannot compare ${ancestor} with ${descendant}`, r);
}

/** A commit of `tree` (a tree-ish) with these parents and message; no ref moves. */
export async function commitTree(
  git: GitRunner,
  tree: string,
  parents: readonly string[],
  message: string,
): Promise<string> {
  checkRefName(tree);
  for (const p of parents) checkRefName(p);
  const out = await git.run(
    `cannot write a commit of ${tree}`,
    ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-F', '-'],
    { input: message },
  );
  return out.trim();
}

export type ObjectFormat = 'sha1' | 'sha256';

/** The object format of the repository `git` names (`where`, for the error): how a blob's id is computed. */
export function readObjectFormat(git: GitRunner, where: string): Promise<ObjectFormat> {
  return git
    .run(`cannot read the object format of ${where}`, ['rev-parse', '--show-object-format'])
    .then((out) => (out.trim() === 'sha256' ? 'sha256' : 'sha1'));
}
