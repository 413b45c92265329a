/**
 * Who may steer an epic (docs/commands.md, docs/security.md): people with write permission.
 * Bots — epicflow included — are ignored without a word, so two bots can never
 * answer each other forever; people without permission get one short reply.
 */

/** The collaborator-permission API's answer (`maintain` counts as write, `triage` as read). */
export type Permission = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

interface SenderInput {
  /** `sender.type` of the webhook: 'User', 'Bot', 'Organization', … */
  readonly senderType: string;
  readonly login: string;
  /** epicflow's own login, e.g. `epicflow[bot]`. */
  readonly botLogin: string;
  /** Null when the lookup found no collaborator: treated as `none`. */
  readonly permission: Permission | null;
}

export type SenderDecision = 'act' | { readonly ignore: 'bot' } | { readonly reply: string };

const WRITERS: ReadonlySet<Permission> = new Set(['admin', 'maintain', 'write']);

export function isBot(senderType: string, login: string, botLogin: string): boolean {
  const bare = (name: string): string => name.toLowerCase().replace(/\[bot\]$/, '');
  return senderType === 'Bot' || /\[bot\]$/i.test(login) || bare(login) === bare(botLogin);
}

export function decideSender(input: SenderInput): SenderDecision {
  if (isBot(input.senderType, input.login, input.botLogin)) return { ignore: 'bot' };
  const permission = input.permission ?? 'none';
  if (WRITERS.has(permission)) return 'act';
  // Logins are [A-Za-z0-9-] on GitHub; anything else is dropped rather than echoed.
  const login = input.login.replace(/[^A-Za-z0-9-]/g, '');
  return {
    reply: `@${login} only users with write permission on this repository can steer epicflow (your permission: ${permission}). Ask a maintainer to comment the command.`,
  };
}
