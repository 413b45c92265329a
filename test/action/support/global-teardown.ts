/** jest globalTeardown of the action project: removes the bundle global-setup.ts built. */
import { rm } from 'node:fs/promises';

export default async function globalTeardown(): Promise<void> {
  const dir = process.env['EPICFLOW_TEST_BUNDLE_DIR'];
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
}
