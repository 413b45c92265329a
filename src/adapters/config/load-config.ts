/**
 * Finds and reads the config file of a repository (docs/config.md): `--config
 * FILE` if given, else `.github/epicflow.yml`, else `epicflow.yml`; none means
 * every default. Validation is the core's `parseConfig`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { EpicflowError } from '../../core/errors.js';
import { DEFAULT_CONFIG, parseConfig } from '../../core/config/schema.js';
import { parseUserRoster } from '../../core/config/user-roster-schema.js';
import {
  detectionNotes,
  leftToDetection,
  withDetected as detected,
} from '../../core/init/index.js';
import { treeDetectionFiles } from '../repo/detection-files.js';
import type { EpicflowConfig } from '../../core/config/types.js';

/** Looked up in this order, relative to the repository. */
export const CONFIG_LOCATIONS = ['.github/epicflow.yml', 'epicflow.yml'] as const;

interface LoadConfigOptions {
  readonly repoDir: string;
  /** `--config FILE`, relative to the current directory. */
  readonly configFile?: string;
  /**
   * The user-level roster file (`userRosterPath`), added under the config's executors
   * when it exists. Local commands only: a job on GitHub runs the repository's roster.
   */
  readonly userRoster?: string | null;
}

interface LoadedConfig {
  readonly config: EpicflowConfig;
  /** Absolute path of the file read, or null when defaults were used. */
  readonly file: string | null;
  /** What detection could not decide about what the config leaves out (`detectionNotes`). */
  readonly detectionNotes: readonly string[];
}

export async function loadConfig(options: LoadConfigOptions): Promise<LoadedConfig> {
  const userFile = options.userRoster ?? null;
  const userText = userFile === null ? undefined : await readText(userFile, userFile);
  const user =
    userFile === null || userText === undefined ? [] : parseUserRoster(userText, userFile);
  if (options.configFile !== undefined) {
    const file = path.resolve(options.configFile);
    const text = await readText(file, options.configFile);
    if (text === undefined) {
      throw new EpicflowError('config', `config file not found: ${options.configFile}`);
    }
    return {
      ...(await withDetected(parseConfig(text, options.configFile, user), text, options)),
      file,
    };
  }
  for (const location of CONFIG_LOCATIONS) {
    const file = path.join(options.repoDir, location);
    const text = await readText(file, location);
    if (text !== undefined) {
      return { ...(await withDetected(parseConfig(text, location, user), text, options)), file };
    }
  }
  // A `.yaml` file would otherwise be ignored silently.
  for (const location of CONFIG_LOCATIONS) {
    const misnamed = location.replace(/\.yml$/, '.yaml');
    if ((await readText(path.join(options.repoDir, misnamed), misnamed)) !== undefined) {
      throw new EpicflowError('config', `found ${misnamed}, but epicflow reads ${location}`, {
        details: [`rename ${misnamed} to ${location}`],
      });
    }
  }
  return { config: DEFAULT_CONFIG, file: null, detectionNotes: [] };
}

/** The config with what it leaves out detected in the working tree (`withDetected`). */
async function withDetected(
  config: EpicflowConfig,
  text: string,
  options: LoadConfigOptions,
): Promise<Pick<LoadedConfig, 'config' | 'detectionNotes'>> {
  const left = leftToDetection(text);
  if (!left.gates && !left.packages) return { config, detectionNotes: [] };
  const files = await treeDetectionFiles(options.repoDir);
  return { config: detected(config, left, files), detectionNotes: detectionNotes(left, files) };
}

/** The file's text, or undefined when there is no such file. */
async function readText(file: string, shown: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    const reason = code === 'EISDIR' ? 'it is a directory' : (error as Error).message;
    throw new EpicflowError('config', `cannot read config file ${shown}: ${reason}`, {
      cause: error,
    });
  }
}
