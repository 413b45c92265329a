/**
 * The `Untrusted` port of a local command (`epicflow run`, `epicflow land`, `epicflow
 * retro`): who untrusted code runs as (see core/agent-user.ts) and whether it runs in the
 * kernel sandbox (on unless `--no-sandbox`; where the machine cannot run it, said once
 * with what to do), chosen once and said once.
 */
import { chooseAgentUser, type AgentUserFlag } from '../../core/agent-user.js';
import { describeError } from '../../core/errors.js';
import { baseEnv } from '../../adapters/process/run-process.js';
import { ownKeyring } from '../../adapters/process/keyring.js';
import { sandbox, SandboxUnavailable, type Sandbox } from '../../adapters/process/sandbox.js';
import { agentUser, sameUser, type Untrusted } from '../../adapters/process/untrusted.js';

export async function localUntrusted(
  flags: { readonly agentUser?: AgentUserFlag; readonly sandbox?: boolean | undefined },
  folders: {
    readonly roots: readonly string[];
    readonly home: string;
    /**
     * The repository's git folder: no step sees it, even inside a folder it may read; a
     * step in one of its trees gets a repository of its own in the sandbox.
     */
    readonly gitDir: string;
  },
  hooks: {
    readonly env: NodeJS.ProcessEnv;
    readonly onWarning?: ((line: string) => void) | undefined;
  },
): Promise<Untrusted> {
  const env = baseEnv(hooks.env);
  let walls: Sandbox | undefined;
  if (flags.sandbox !== false) {
    try {
      walls = await sandbox(env, undefined, folders.roots, folders.gitDir);
    } catch (e) {
      if (!(e instanceof SandboxUnavailable)) throw e;
      hooks.onWarning?.(
        `warning: ${describeError(e).replace(/\n\s*/g, '; ')} — the agent, setup and gates run without it (--no-sandbox silences this)`,
      );
    }
  }
  const choice = chooseAgentUser(flags.agentUser, process.getuid?.() === 0, walls !== undefined);
  // Checked before anything is created: a user that cannot be had is a usage problem (exit 2).
  const untrusted =
    choice.user === undefined
      ? sameUser(walls)
      : await agentUser({
          user: choice.user,
          roots: folders.roots,
          home: folders.home,
          env,
          ...(walls === undefined ? {} : { sandbox: walls }),
        });
  if (choice.note !== undefined) hooks.onWarning?.(choice.note);
  const keyring = await ownKeyring();
  if (keyring.note !== undefined && (untrusted.isolated || untrusted.walled)) {
    hooks.onWarning?.(`warning: ${keyring.note}`);
  }
  return untrusted;
}
