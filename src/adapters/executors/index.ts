/**
 * The executor factory: the configured harness → its adapter behind the
 * executor port.
 */
import type { ExecutorConfig, Harness, ModelPrice } from '../../core/config/types.js';
import type { ExecutorPort } from '../../core/executor.js';
import { isCliHarness } from '../../core/harness/index.js';
import type { Untrusted } from '../process/untrusted.js';
import { CliExecutor } from './cli-executor.js';
import { CommandExecutor } from './command.js';

export interface ExecutorDeps {
  /** Where the base environment comes from (default: this process's). */
  readonly sourceEnv?: NodeJS.ProcessEnv;
  /** Price overrides from config. */
  readonly prices?: Readonly<Record<string, ModelPrice>>;
  /** Binary overrides per CLI harness (default: the CLI's name on PATH). */
  readonly binaries?: Partial<Record<Exclude<Harness, 'command'>, string>>;
  /** Model API base URLs per CLI harness (gateways; loopback servers in tests). */
  readonly baseUrls?: Partial<Record<Exclude<Harness, 'command'>, string>>;
  readonly now?: () => Date;
  /** Where the agent's process runs (default: as epicflow's own user, marker-reaped). */
  readonly untrusted?: Untrusted;
}

export function createExecutor(config: ExecutorConfig, deps: ExecutorDeps = {}): ExecutorPort {
  const sourceEnv = {
    ...(deps.sourceEnv === undefined ? {} : { sourceEnv: deps.sourceEnv }),
    ...(deps.untrusted === undefined ? {} : { untrusted: deps.untrusted }),
  };
  if (!isCliHarness(config.harness)) return new CommandExecutor(sourceEnv);
  const binary = deps.binaries?.[config.harness];
  const baseUrl = deps.baseUrls?.[config.harness];
  return new CliExecutor(config, {
    ...sourceEnv,
    ...(binary === undefined ? {} : { binary }),
    ...(baseUrl === undefined ? {} : { baseUrl }),
    ...(deps.prices === undefined ? {} : { prices: deps.prices }),
    ...(deps.now === undefined ? {} : { now: deps.now }),
  });
}
