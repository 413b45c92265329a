/** Coders that would code several stories at once on one local model server: a warning each. */
import { describe, expect, it } from '@jest/globals';
import { parseConfig } from '../../../src/core/config/index.js';
import { localServerWarnings } from '../../../src/core/doctor/local-server.js';

const config = (lines: readonly string[]) => parseConfig(lines.join('\n'), 'epicflow.yml');

describe('localServerWarnings', () => {
  it('two coders on one loopback server, named two ways: one warning naming both and the URL', () => {
    const warnings = localServerWarnings(
      config([
        'executors:',
        '  - { id: qwen, harness: opencode, model: lmstudio/qwen3-coder, health: "http://127.0.0.1:1234/v1/models" }',
        '  - { id: coder-b, harness: codex, model: m, env: { OPENAI_BASE_URL: "http://localhost:1234/v1" } }',
        '  - { id: claude, harness: claude, model: sonnet }',
        'concurrency: 3',
      ]),
    );
    expect(warnings).toEqual([
      'coders qwen, coder-b use one local model server, http://127.0.0.1:1234: up to 2 stories at once will queue on it and may run out of time; to code one story at a time there, set concurrency: 1 (or epicflow run --concurrency 1), or keep one executor on it with slots: 1',
    ]);
  });

  it('one coder with several slots on it: the warning names its slots', () => {
    const warnings = localServerWarnings(
      config([
        'executors:',
        '  - { id: llama, harness: aider, model: ollama_chat/llama3, slots: 3 }',
      ]),
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^coder llama \(slots: 3\) uses one local model server, http:\/\/127\.0\.0\.1:11434: up to 3 stories/,
    );
  });

  it('nothing when the stories cannot run there at once, or the server is not local', () => {
    const two = [
      'executors:',
      '  - { id: a, harness: opencode, model: lmstudio/x }',
      '  - { id: b, harness: opencode, model: lmstudio/y }',
    ];
    expect(localServerWarnings(config([...two, 'concurrency: 1']))).toEqual([]);
    // `epicflow run --concurrency 1` overrides the config's.
    expect(localServerWarnings(config(two), 1)).toEqual([]);
    expect(localServerWarnings(config(two), 2)).toHaveLength(1);
    // Different ports are different servers; a judge is no coder; a remote URL is not local.
    expect(
      localServerWarnings(
        config([
          'executors:',
          '  - { id: a, harness: opencode, model: lmstudio/x }',
          '  - { id: b, harness: codex, model: m, env: { OPENAI_BASE_URL: "http://127.0.0.1:8080/v1" } }',
          '  - { id: j, harness: opencode, model: lmstudio/z, roles: [judge] }',
          '  - { id: c, harness: codex, model: m, slots: 4, env: { OPENAI_BASE_URL: "https://gateway.example.com/v1" } }',
        ]),
      ),
    ).toEqual([]);
  });
});
