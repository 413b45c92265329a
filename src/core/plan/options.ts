/**
 * The plan validator's options, from the configuration: one function, so every
 * entry (the local run, `plan draft`, the App, the Action's story job) checks a
 * plan, and the perimeter checks a story's changes, by the same rules.
 */
import { DEFAULT_CONFIG_PATHS, normalisePath } from '../paths.js';
import type { PlanOptions } from './types.js';

export function planOptionsFor(
  config: { readonly allowWorkflowChanges: boolean },
  /**
   * The configuration file that was read, relative to the repository root; undefined
   * when it was a default location, none, or outside the repository.
   */
  configFile?: string,
): Required<PlanOptions> {
  const read = configFile === undefined ? [] : [normalisePath(configFile)];
  return {
    allowWorkflowChanges: config.allowWorkflowChanges,
    // Stories may own neither the default locations nor the file actually read.
    configPaths: [...new Set([...DEFAULT_CONFIG_PATHS, ...read])],
  };
}
