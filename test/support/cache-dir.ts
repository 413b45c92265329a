/**
 * Where the tests keep what is costly to make and safe to reuse between runs (the Node 24
 * binary, the double's compiled schema validators): the user's cache folder,
 * `$XDG_CACHE_HOME/epicflow/<name>` (`~/.cache/epicflow/<name>` by default), or
 * `$EPICFLOW_TEST_CACHE/<name>`. Not under node_modules: `npm ci` deletes that.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

export function testCacheDir(name: string): string {
  const root =
    process.env['EPICFLOW_TEST_CACHE'] ??
    join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'epicflow');
  return join(root, name);
}
