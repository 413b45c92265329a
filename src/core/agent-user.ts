/**
 * Who the agent, setup and gates run as: the user named (`--agent-user`, the Action's
 * `agent-user`); else, when epicflow runs as root, an unprivileged user of its own (root
 * would hand the agent the whole machine, and a step must not be uid 0 even inside the
 * sandbox); else, inside the kernel sandbox, epicflow's own user (the kernel's walls keep
 * the step from this process, its files and its environment: no second user, hand-over or
 * passage is needed); else, outside it, epicflow's own user in a local run (said once), and
 * an agent user in an Action job (its token must stay out of the agent's reach).
 */

/** The pool a run as root takes its agent users from when none is named. */
export const DEFAULT_AGENT_USER = 'epicflow-agent';

/** `--agent-user USER` (a name), `--no-agent-user` (false), or neither (undefined). */
export type AgentUserFlag = string | false | undefined;

interface AgentUserChoice {
  /** The pool to run untrusted code as; undefined: epicflow's own user. */
  readonly user: string | undefined;
  /** One line to say once at the start, when the choice is not the one the user named. */
  readonly note: string | undefined;
}

export function chooseAgentUser(
  flag: AgentUserFlag,
  asRoot: boolean,
  /** Whether untrusted code runs inside the kernel sandbox. */
  walled = false,
  /**
   * Who runs it, as an unprivileged epicflow, where the sandbox does not: epicflow's own user
   * (`self`, a local run) or an agent user (`agent-user`, a job of the Action).
   */
  unwalled: 'self' | 'agent-user' = 'self',
): AgentUserChoice {
  if (typeof flag === 'string') return { user: flag, note: undefined };
  if (flag === undefined && asRoot) {
    return {
      user: DEFAULT_AGENT_USER,
      note: `note: epicflow runs as root, so the agent, setup and gates run as the unprivileged user ${DEFAULT_AGENT_USER} (made when missing); --agent-user USER picks another, --no-agent-user runs them as root`,
    };
  }
  if (!walled && !asRoot && flag === undefined && unwalled === 'agent-user') {
    return { user: DEFAULT_AGENT_USER, note: undefined };
  }
  if (walled) {
    return {
      user: undefined,
      note: asRoot
        ? 'note: the agent, setup and gates run as root without capabilities inside the kernel sandbox (--no-agent-user): they see their own tree and the system folders, read-only, as root reads them'
        : undefined,
    };
  }
  return {
    user: undefined,
    note: asRoot
      ? 'note: the agent, setup and gates run as root (--no-agent-user): they can read and change everything on this machine, and the environment of every process, this one included'
      : 'note: the agent, setup and gates run as you: they can read what you can (your files, and the environment of every process of yours, this one included); --agent-user USER runs them as another user',
  };
}
