/**
 * A session keyring of the step's own (see `keyringOfItsOwn` in core/sandbox.ts): the argv
 * prefix, proven once per process to run here, or why there is none. Without it a step
 * possesses epicflow's session keyring — inherited through a change of user and into the
 * kernel sandbox alike — and may read every key in it.
 */
import { access, constants } from 'node:fs/promises';
import { keyringOfItsOwn } from '../../core/sandbox.js';
import { runProcess } from './run-process.js';

/** The system's perl (`perl-base`): in a folder every sandboxed step sees. */
const PERL = '/usr/bin/perl';

interface OwnKeyring {
  /** The argv prefix; empty where there is none. */
  readonly prefix: readonly string[];
  /** The environment the prefix needs (and takes away again before the step). */
  readonly env: Readonly<Record<string, string>>;
  /** Why the steps share epicflow's session keyring, and what to do; undefined when they do not. */
  readonly note: string | undefined;
}

let proven: Promise<OwnKeyring> | undefined;

/** The prefix that gives each step a session keyring of its own, proven once per process. */
export function ownKeyring(): Promise<OwnKeyring> {
  proven ??= prove();
  return proven;
}

async function prove(): Promise<OwnKeyring> {
  const none = (why: string): OwnKeyring => ({
    prefix: [],
    env: {},
    note: `untrusted steps share epicflow's session keyring (${why}): a key epicflow's process holds there is readable by them`,
  });
  // Kernel keyrings, and the call numbers, are Linux's.
  if (process.platform !== 'linux') return { prefix: [], env: {}, note: undefined };
  const present = await access(PERL, constants.X_OK).then(
    () => true,
    () => false,
  );
  if (!present) return none(`${PERL} is missing: install perl-base`);
  const prefix = keyringOfItsOwn(PERL, process.arch);
  if (prefix === undefined) return none(`the keyctl call of ${process.arch} is not known`);
  const env = { PERL_BADLANG: '0', PATH: '/usr/bin:/bin' };
  const r = await runProcess([...prefix, 'true'], { cwd: '/', env, timeoutMs: 30_000 });
  if (r.exitCode !== 0) {
    return none(`${PERL} could not make one: ${r.stderr.trim() || `exit ${String(r.exitCode)}`}`);
  }
  return { prefix, env: { PERL_BADLANG: '0' }, note: undefined };
}
