import { readFile } from 'node:fs/promises';
import { describe, expect, it } from '@jest/globals';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import {
  REFERENCE_END,
  REFERENCE_START,
  configJsonSchema,
  renderJsonSchema,
  updateConfigDocs,
} from '../../../src/core/config/json-schema.js';
import { parseConfig } from '../../../src/core/config/schema.js';

const root = new URL('../../../', import.meta.url);
const read = (file: string): Promise<string> => readFile(new URL(file, root), 'utf8');

/** Every key of every object in the schema, with its description. */
function keysOf(schema: unknown, at: string, out: [string, unknown][]): [string, unknown][] {
  if (typeof schema !== 'object' || schema === null) return out;
  const node = schema as Record<string, unknown>;
  for (const [key, value] of Object.entries((node.properties ?? {}) as Record<string, unknown>)) {
    out.push([`${at}${key}`, (value as Record<string, unknown>).description]);
    keysOf(value, `${at}${key}.`, out);
  }
  keysOf(node.items, `${at}[].`, out);
  keysOf(node.additionalProperties, `${at}*.`, out);
  return out;
}

function yamlBlock(markdown: string): string {
  const match = /## Full example\n\n```yaml\n([\s\S]*?)```/.exec(markdown);
  if (match?.[1] === undefined) throw new Error('docs/config.md has no full example');
  return match[1];
}

describe('JSON Schema', () => {
  it('schema.json is up to date (run npm run schema)', async () => {
    expect(await read('schema.json')).toBe(renderJsonSchema());
  });

  it('has a title and a description on every key', () => {
    const schema = configJsonSchema();
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema.title).toBe('epicflow configuration');
    const keys = keysOf(schema, '', []);
    expect(keys.length).toBeGreaterThan(30);
    expect(keys.filter(([, description]) => typeof description !== 'string')).toEqual([]);
  });

  it('validates what the zod schema accepts and rejects typos and bad values', async () => {
    const validate = new Ajv({ strict: false }).compile(configJsonSchema());
    const example = parse(yamlBlock(await read('docs/config.md'))) as unknown;
    expect(validate(example)).toBe(true);
    expect(validate({})).toBe(true);
    expect(validate({ gatez: [] })).toBe(false);
    expect(validate({ timeouts: { story: 'soon' } })).toBe(false);
    expect(validate({ timeouts: { story: '1h30m', gate: 90 } })).toBe(true);
    expect(validate({ executors: [{ id: 'a', harness: 'cursor' }] })).toBe(false);
  });
});

describe('docs/config.md', () => {
  it('has an up-to-date reference (run npm run schema)', async () => {
    const docs = await read('docs/config.md');
    expect(docs).toContain(REFERENCE_START);
    expect(docs).toContain(REFERENCE_END);
    expect(docs).toBe(updateConfigDocs(docs));
  });

  it('has a full example that parses', async () => {
    const config = parseConfig(yamlBlock(await read('docs/config.md')), 'docs/config.md');
    expect(config.executors.map((e) => e.id)).toEqual(['codex', 'claude', 'house-agent']);
  });

  it('documents every top-level key', async () => {
    const docs = await read('docs/config.md');
    for (const key of Object.keys(configJsonSchema().properties as object)) {
      expect(docs).toContain(`| \`${key}\` |`);
    }
  });
});
