/**
 * A test's own entry (a file that runs epicflow's code in a process of its own) bundled by
 * the Action's build (`scripts/build-action.mjs --entry`) into a folder, with the tests'
 * process helper's program beside it: an entry that starts its processes from the helper
 * (test/support/process-starter.ts) looks for the program next to its bundle.
 *
 * Plain JavaScript: the action project's global setup loads it without the project's module
 * mapping, where a `.js` import of a TypeScript source does not resolve.
 */
import { execFile } from 'node:child_process';
import { copyFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const BUILD = join(ROOT, 'scripts/build-action.mjs');
export const HELPER = join(ROOT, 'test/support/process-starter-child.py');

/**
 * The file name of `entry`'s bundle.
 *
 * @param {string} entry
 */
export function bundleName(entry) {
  return `${basename(entry).replace(/\.[cm]?[jt]s$/, '')}.js`;
}

/**
 * Bundles `entry` into `folder` beside the helper's program.
 *
 * @param {string} folder
 * @param {string} entry
 * @returns {Promise<string>} the bundle's path (`node <path> …` runs it)
 */
export async function bundleEntryInto(folder, entry) {
  await promisify(execFile)(process.execPath, [BUILD, folder, '--entry', entry], { cwd: ROOT });
  await copyFile(HELPER, join(folder, basename(HELPER)));
  return join(folder, bundleName(entry));
}
