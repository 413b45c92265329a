/**
 * Where a shell would find a program: a path as is, a name on PATH. What `doctor`, the
 * start of `epicflow run` and a story job check the setup's and gates' toolchains with.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { NeededProgram } from '../../core/doctor/toolchains.js';

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A program name found the way a shell would: a path as is (against `root`), else on PATH. */
export async function onPath(name: string, env: NodeJS.ProcessEnv, root: string): Promise<boolean> {
  return (await locate(name, env, root)) !== undefined;
}

/** Where a shell would find a program, or undefined. */
export async function locate(
  name: string,
  env: NodeJS.ProcessEnv,
  root: string,
): Promise<string | undefined> {
  if (name.includes('/')) {
    const path = isAbsolute(name) ? name : resolve(root, name);
    return (await executable(path)) ? path : undefined;
  }
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir !== '' && (await executable(join(dir, name)))) return join(dir, name);
  }
  return undefined;
}

/** The programs of `needed` a shell would not find. */
export async function notOnPath(
  needed: readonly NeededProgram[],
  env: NodeJS.ProcessEnv,
  root: string,
): Promise<NeededProgram[]> {
  const missing: NeededProgram[] = [];
  for (const p of needed) if (!(await onPath(p.program, env, root))) missing.push(p);
  return missing;
}
