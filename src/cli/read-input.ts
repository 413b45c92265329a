import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { EpicflowError } from '../core/errors.js';
import type { CliIo } from './context.js';

const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

/** Reads a file named on the command line, or stdin for `-`; failures are usage errors. */
export async function readInput(file: string, io: CliIo): Promise<string> {
  if (file === '-') return io.readStdin();
  try {
    return await readFile(resolve(io.cwd, file), 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    const reason = REASONS[code] ?? (e instanceof Error ? e.message : String(e));
    throw new EpicflowError('usage', `cannot read ${JSON.stringify(file)}: ${reason}`, {
      cause: e,
    });
  }
}
