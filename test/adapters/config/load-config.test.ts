import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../../src/adapters/config/load-config.js';
import { DEFAULT_CONFIG } from '../../../src/core/config/schema.js';
import { EpicflowError, describeError } from '../../../src/core/errors.js';

let repoDir: string;

beforeEach(async () => {
  repoDir = await mkdtemp(path.join(tmpdir(), 'epicflow-config-'));
});

afterEach(async () => {
  await rm(repoDir, { recursive: true, force: true });
});

async function write(relative: string, text: string): Promise<string> {
  const file = path.join(repoDir, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
  return file;
}

async function failure(promise: Promise<unknown>): Promise<EpicflowError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(EpicflowError);
    return error as EpicflowError;
  }
  throw new Error('expected loadConfig to fail');
}

describe('loadConfig', () => {
  it('uses every default when the repository has no config', async () => {
    expect(await loadConfig({ repoDir })).toEqual({
      config: DEFAULT_CONFIG,
      file: null,
      detectionNotes: [],
    });
  });

  it('reads epicflow.yml at the root', async () => {
    const file = await write('epicflow.yml', 'concurrency: 3\n');
    const loaded = await loadConfig({ repoDir });
    expect(loaded.file).toBe(file);
    expect(loaded.config.concurrency).toBe(3);
  });

  it('prefers .github/epicflow.yml over epicflow.yml', async () => {
    await write('epicflow.yml', 'concurrency: 3\n');
    const file = await write('.github/epicflow.yml', 'concurrency: 5\n');
    const loaded = await loadConfig({ repoDir });
    expect(loaded.file).toBe(file);
    expect(loaded.config.concurrency).toBe(5);
  });

  it('prefers --config over both', async () => {
    await write('epicflow.yml', 'concurrency: 3\n');
    await write('.github/epicflow.yml', 'concurrency: 5\n');
    const file = await write('elsewhere/custom.yml', 'concurrency: 7\n');
    const loaded = await loadConfig({ repoDir, configFile: file });
    expect(loaded.file).toBe(file);
    expect(loaded.config.concurrency).toBe(7);
  });

  it('fails on a missing --config file, naming it, even when the repository has one', async () => {
    await write('.github/epicflow.yml', 'concurrency: 5\n');
    const missing = path.join(repoDir, 'nope.yml');
    const error = await failure(loadConfig({ repoDir, configFile: missing }));
    expect(error.tag).toBe('config');
    expect(error.message).toBe(`config file not found: ${missing}`);
  });

  it('fails when --config names a directory', async () => {
    const error = await failure(loadConfig({ repoDir, configFile: repoDir }));
    expect(error.tag).toBe('config');
    expect(error.message).toBe(`cannot read config file ${repoDir}: it is a directory`);
  });

  it('names the file relative to the repository when it is invalid', async () => {
    await write('.github/epicflow.yml', 'gatez: [npm test]\nconcurrency: 0\n');
    const error = await failure(loadConfig({ repoDir }));
    expect(describeError(error)).toBe(
      [
        'invalid config in .github/epicflow.yml',
        '  gatez: unknown key (did you mean "gates"?)',
        '  concurrency: expected a positive integer, got 0',
      ].join('\n'),
    );
  });

  it('does not fall back to another file when the first one is invalid', async () => {
    await write('.github/epicflow.yml', 'concurrency: many\n');
    await write('epicflow.yml', 'concurrency: 3\n');
    const error = await failure(loadConfig({ repoDir }));
    expect(error.message).toBe('invalid config in .github/epicflow.yml');
  });

  it('refuses a config named .yaml instead of ignoring it', async () => {
    await write('.github/epicflow.yaml', 'concurrency: 3\n');
    const error = await failure(loadConfig({ repoDir }));
    expect(describeError(error)).toBe(
      [
        'found .github/epicflow.yaml, but epicflow reads .github/epicflow.yml',
        '  rename .github/epicflow.yaml to .github/epicflow.yml',
      ].join('\n'),
    );
  });
});
