/**
 * The scripted agents of the action tests (`*.mjs` next to this file). Story jobs run
 * them as the agent user, who may not be able to read the checkout they live in (a
 * clone in a `mktemp -d` folder, or under a home with mode 700, is closed to other
 * users): global-setup.ts copies them to a folder anyone may read, and this names them
 * there.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const AGENT_SOURCES = dirname(fileURLToPath(import.meta.url));

/** The path of a scripted agent the agent user can read. */
export function agentScript(name: string): string {
  return join(process.env['EPICFLOW_TEST_AGENT_DIR'] ?? AGENT_SOURCES, name);
}
