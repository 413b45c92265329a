/**
 * The `Untrusted` port of a local command (`epicflow run`, `epicflow land`): chosen once
 * (see core/agent-user.ts) and said once.
 */
import { chooseAgentUser, type AgentUserFlag } from '../core/agent-user.js';
import { baseEnv } from '../adapters/process/run-process.js';
import { agentUser, sameUser, type Untrusted } from '../adapters/process/untrusted.js';

export async function localUntrusted(
  flag: AgentUserFlag,
  folders: { readonly roots: readonly string[]; readonly home: string },
  hooks: {
    readonly env: NodeJS.ProcessEnv;
    readonly onWarning?: ((line: string) => void) | undefined;
  },
): Promise<Untrusted> {
  const choice = chooseAgentUser(flag, process.getuid?.() === 0);
  // Checked before anything is created: a user that cannot be had is a usage problem (exit 2).
  const untrusted =
    choice.user === undefined
      ? sameUser()
      : await agentUser({ user: choice.user, ...folders, env: baseEnv(hooks.env) });
  if (choice.note !== undefined) hooks.onWarning?.(choice.note);
  return untrusted;
}
