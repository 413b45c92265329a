/**
 * A test's own child entry (a file that runs epicflow's code in a process of its own, such
 * as the engine's crash child) bundled into one file by the Action's build
 * (`scripts/build-action.mjs --entry`), once per state of the sources and of the entry, in
 * the system's temp folder. A child started from the bundle loads one file: about 0.5 s of
 * CPU, where `node --import tsx <entry>` spends about 2.5 s resolving and transpiling the
 * sources each time it starts (docs/testing.md, "Where the time goes").
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { madeOnce, sourceHash } from './built-package.js';
import { BUILD, bundleEntryInto, bundleName, HELPER } from './entry-bundle.js';

const bundles = new Map<string, Promise<string>>();

/** The path of `entry`'s bundle (`node <path> …` runs it), built when needed. */
export function bundledEntry(entry: string): Promise<string> {
  let bundle = bundles.get(entry);
  if (bundle === undefined) {
    bundle = build(entry);
    bundles.set(entry, bundle);
  }
  return bundle;
}

async function build(entry: string): Promise<string> {
  // What the bundle depends on besides the sources: the entry (its imports are epicflow's
  // sources) and the build itself.
  const key = createHash('sha256')
    .update(await sourceHash())
    .update(entry)
    .update(await readFile(entry))
    .update(await readFile(BUILD))
    .update(await readFile(HELPER))
    .digest('hex')
    .slice(0, 16);
  const dir = await madeOnce(
    join(tmpdir(), `epicflow-entries-${process.getuid?.() ?? 'any'}`),
    key,
    async (scratch) => {
      await bundleEntryInto(scratch, entry);
    },
  );
  return join(dir, bundleName(entry));
}
