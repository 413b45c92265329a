/**
 * The double's disk cache of what it reads from GitHub's contract data (test/support/cache-dir.ts):
 * trimmed descriptions, each description split into one small file per operation, webhook,
 * example and GraphQL document, and compiled validators. Every entry is named by a hash that
 * starts with `CACHE_SALT` (the packages' versions and the source of every file that reads
 * them), so any change makes new entries; parallel workers write a file or a whole folder
 * under a name of their own, then rename it into place.
 */
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testCacheDir } from '../support/cache-dir.js';

export const require = createRequire(import.meta.url);

export function versionOf(pkg: string): string {
  return (require(`${pkg}/package.json`) as { version: string }).version;
}

const HERE = dirname(fileURLToPath(import.meta.url));

/** The files whose code decides what is read and kept (the reading rules). */
const READERS = ['spec-cache.ts', 'spec.ts', 'rest-paths.ts', 'graphql-schema.ts'];

/** What every cache key starts with: the packages and the rules the schemas were read by. */
export const CACHE_SALT = createHash('sha256')
  .update(
    [
      versionOf('ajv'),
      versionOf('ajv-formats'),
      versionOf('@octokit/openapi'),
      versionOf('@octokit/openapi-webhooks'),
      versionOf('graphql'),
      ...READERS.map((f) => readFileSync(join(HERE, f), 'utf8')),
    ].join('\n'),
  )
  .digest('hex');

export function saltedName(key: string): string {
  return createHash('sha256').update(`${CACHE_SALT}\n${key}`).digest('hex').slice(0, 40);
}

export function storeFile(file: string, text: string): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    // Parallel workers may write the same entry: each writes its own file, then renames.
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(tmp, text);
    renameSync(tmp, file);
  } catch {
    // A read-only or full disk only costs the next file a compile.
  }
}

export const DESCRIPTIONS = testCacheDir('double-descriptions');

/** Drops the copies no run has made for a day (each change of the salt makes new ones). */
function pruneDescriptions(): void {
  try {
    for (const name of readdirSync(DESCRIPTIONS)) {
      const file = join(DESCRIPTIONS, name);
      try {
        if (Date.now() - statSync(file).mtimeMs > 24 * 3600_000) {
          rmSync(file, { force: true, recursive: true });
        }
      } catch {
        // another worker pruned it meanwhile
      }
    }
  } catch {
    // none yet
  }
}

/** A JSON value kept at `file`, or undefined when there is none (or it is cut). */
export function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/**
 * What `make` returns, kept on disk as JSON under `key` (hashed with the salt) and read back
 * by every later file and run; made by the first file that needs it.
 */
export function cachedJson<T>(key: string, make: () => T): T {
  const file = join(DESCRIPTIONS, `${saltedName(key)}.json`);
  const kept = readJson<T>(file);
  if (kept !== undefined) return kept;
  pruneDescriptions();
  const made = make();
  storeFile(file, JSON.stringify(made));
  return made;
}

/**
 * A folder of JSON files kept under `key`: its path when it is complete, else made by
 * `make` (name → value) into a folder of this process's own and renamed into place whole,
 * so a reader sees every file of it or none. Undefined when the disk refuses it.
 */
export function cachedFolder(key: string, make: () => Map<string, unknown>): string | undefined {
  const dir = join(DESCRIPTIONS, saltedName(key));
  try {
    if (statSync(join(dir, 'index.json')).isFile()) return dir;
  } catch {
    // not made yet, or pruned
  }
  pruneDescriptions();
  const tmp = `${dir}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  try {
    mkdirSync(tmp, { recursive: true });
    for (const [name, value] of make()) writeFileSync(join(tmp, name), JSON.stringify(value));
    renameSync(tmp, dir);
  } catch {
    // another worker renamed its copy first (or the disk is full): use theirs, drop ours
    rmSync(tmp, { force: true, recursive: true });
  }
  try {
    return statSync(join(dir, 'index.json')).isFile() ? dir : undefined;
  } catch {
    return undefined;
  }
}
