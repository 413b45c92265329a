/** Types of test/support/modes.js (plain JavaScript, loaded by jest's configuration). */
export type Mode = 'root' | 'sudo' | 'cron' | 'at' | 'sandbox' | 'acl' | 'pytest' | 'go';
export const MODES: readonly Mode[];
export interface Detected {
  readonly missing: Map<Mode, string>;
  readonly packages: string[];
}
export function detectModes(of?: { env?: NodeJS.ProcessEnv; uid?: number }): Detected;
export function notRunTitle(modes: readonly Mode[], missing: Map<Mode, string>): string;
export function modesOfNotRunTitle(title: string): Mode[] | undefined;
