/**
 * What a configuration needs before any story can run: at least one executor
 * with the coder role (and, to plan, one with the planner role). One rule for every entry (the local run and landing, the
 * App's decision, the Actions story job), so none dispatches work another refuses.
 * Likewise before a plan is drafted: at least one executor with the planner role
 * (`plan draft` and the planning job).
 */
import { EpicflowError } from '../errors.js';
import type { EpicflowConfig, ExecutorConfig } from './types.js';

/** Throws the `config` error naming the file when no executor can code. */
export function requireCoder(config: EpicflowConfig, file: string): void {
  if (config.executors.some((e) => e.roles.includes('coder'))) return;
  throw new EpicflowError('config', `invalid config in ${file}`, {
    details: ['executors: list at least one executor with the coder role'],
  });
}

/** The executors with the planner role; throws the `config` error naming the file when none. */
export function requirePlanner(config: EpicflowConfig, file: string): ExecutorConfig[] {
  const planners = config.executors.filter((e) => e.roles.includes('planner'));
  if (planners.length > 0) return planners;
  throw new EpicflowError('config', `no planner in ${file}`, {
    details: [
      'executors[].roles: give an executor the planner role, e.g. roles: [coder, planner] (any harness)',
    ],
  });
}

/** Stories that may run at once by the roster: the coders' slots summed. */
export function coderSlots(config: EpicflowConfig): number {
  return config.executors
    .filter((e) => e.roles.includes('coder'))
    .reduce((sum, e) => sum + e.slots, 0);
}
