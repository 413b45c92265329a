/**
 * The files a new user copies: the starter configuration must load, and the
 * story workflow must install the agent CLI of every executor it names and
 * hand each job the secrets those executors reference.
 */
import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { parseConfig, referencedVariables } from '../../src/core/config/index.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const read = (path: string): Promise<string> => readFile(join(ROOT, path), 'utf8');

/** The npm package that puts each harness's CLI on the PATH. */
const CLI_PACKAGES: Record<string, string> = {
  codex: '@openai/codex',
  claude: '@anthropic-ai/claude-code',
  gemini: '@google/gemini-cli',
  opencode: 'opencode-ai',
};

interface Step {
  readonly run?: string;
  readonly uses?: string;
  readonly env?: Record<string, string>;
}

describe('examples/epicflow.yml', () => {
  it.each(['app', 'github-token'])(
    'is a valid configuration whose agents the %s story workflow installs and whose secrets it passes',
    async (variant) => {
      const config = parseConfig(await read('examples/epicflow.yml'), 'examples/epicflow.yml');
      expect(config.executors.map((e) => e.harness)).toEqual(['codex', 'claude']);

      const workflow = parse(await read(`examples/workflows/${variant}/epicflow-story.yml`)) as {
        jobs: Record<string, { steps: Step[] }>;
      };
      const steps = Object.values(workflow.jobs).flatMap((j) => j.steps);
      const installs = steps.map((s) => s.run ?? '').join('\n');
      const action = steps.find((s) => s.uses?.startsWith('epicflow/epicflow'));
      for (const executor of config.executors) {
        const pkg = CLI_PACKAGES[executor.harness];
        expect(pkg).toBeDefined();
        expect(installs).toContain(pkg ?? '');
        for (const name of Object.values(executor.env).flatMap(referencedVariables)) {
          expect(action?.env?.[name]).toBe(`\${{ secrets.${name} }}`);
        }
      }
    },
  );
});
