/**
 * `--executors a,b`: one run's roster narrowed to the named executors. Pure; the
 * unknown ids are a usage error naming them and the ids there are.
 */
import { EpicflowError } from '../errors.js';
import type { EpicflowConfig } from '../config/types.js';

/** The ids of `--executors` as given: comma-separated, blanks around them ignored. */
export function parseExecutorIds(value: string): string[] {
  return value
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
}

/**
 * The config with only the named executors. Every id must name an executor of the
 * roster (disabled entries are not in it); a judge left out is an error too, since the
 * config asks for that judge and the run would otherwise go on without one silently.
 */
export function selectExecutors(config: EpicflowConfig, ids: readonly string[]): EpicflowConfig {
  const known = config.executors.map((e) => e.id);
  const knownLine = `known executors: ${known.length === 0 ? '(none)' : known.join(', ')}`;
  if (ids.length === 0) {
    throw new EpicflowError('usage', '--executors names no executor', { details: [knownLine] });
  }
  const unknown = ids.filter((id) => !known.includes(id));
  if (unknown.length > 0) {
    throw new EpicflowError(
      'usage',
      `--executors: unknown executor${unknown.length > 1 ? 's' : ''} ${unknown.map((id) => `"${id}"`).join(', ')}`,
      { details: [knownLine] },
    );
  }
  const judge = config.judge?.executor;
  if (judge !== undefined && !ids.includes(judge)) {
    throw new EpicflowError('usage', `--executors leaves out the judge "${judge}"`, {
      details: [`judge.executor names it: add it to --executors (${[...ids, judge].join(',')})`],
    });
  }
  const executors = config.executors.filter((e) => ids.includes(e.id));
  if (!executors.some((e) => e.roles.includes('coder'))) {
    throw new EpicflowError('usage', `--executors ${ids.join(',')} names no coder`, {
      details: [
        `coders: ${config.executors
          .filter((e) => e.roles.includes('coder'))
          .map((e) => e.id)
          .join(', ')}`,
      ],
    });
  }
  return { ...config, executors };
}
