/** jest globalTeardown of the action project: removes the bundle and the agents global-setup.ts made. */
import { rm } from 'node:fs/promises';

export default async function globalTeardown(): Promise<void> {
  const dir = process.env['EPICFLOW_TEST_BUNDLE_DIR'];
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  const agents = process.env['EPICFLOW_TEST_AGENT_DIR'];
  if (agents !== undefined) await rm(agents, { recursive: true, force: true });
}
