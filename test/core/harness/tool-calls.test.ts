import { describe, expect, it } from '@jest/globals';
import { RepeatWatch, STALL_REPEATS, toolCallsOf } from '../../../src/core/harness/tool-calls.js';
import { stream } from './fixtures.js';

/** Every call a whole recorded stream announces, in order. */
function calls(cli: Parameters<typeof toolCallsOf>[0], name: string): string[] {
  return stream(cli, name)
    .split('\n')
    .flatMap((line) => toolCallsOf(cli, line));
}

describe('toolCallsOf: the calls in what each CLI printed', () => {
  it('codex: a command once, when it starts (its result is not part of the call)', () => {
    expect(calls('codex', 'ok.jsonl')).toEqual([
      `command_execution {"command":"/bin/bash -lc 'echo hello > hello.txt'"}`,
    ]);
  });

  it('claude: each tool_use part of an assistant message', () => {
    expect(calls('claude', 'ok.jsonl')).toEqual([
      'Bash {"command":"echo hello > hello.txt","description":"run"}',
    ]);
  });

  it('gemini: tool_use events, by tool name and parameters', () => {
    expect(calls('gemini', 'ok.jsonl')).toEqual([
      `run_shell_command {"command":"echo hello > hello.txt && grep -r 'RESOURCE_EXHAUSTED' docs"}`,
    ]);
  });

  it('opencode: tool_use parts, by tool and input', () => {
    const found = calls('opencode', 'ok.jsonl');
    expect(found.length).toBeGreaterThan(0);
    expect(found[0]).toMatch(/^bash \{"command":"echo hello > hello.txt; /);
  });

  it('aider, prose and broken lines: none', () => {
    expect(calls('aider', 'ok.txt')).toEqual([]);
    expect(toolCallsOf('claude', '{"type":"assistant","message":')).toEqual([]);
    expect(toolCallsOf('codex', 'plain text')).toEqual([]);
    expect(toolCallsOf('gemini', '[1,2]')).toEqual([]);
  });
});

describe('RepeatWatch', () => {
  it(`stops at the ${STALL_REPEATS}th same call in a row, and another call in between resets it`, () => {
    const watch = new RepeatWatch();
    const seen = ['a', 'a', 'a', 'a', 'b', 'a', 'a', 'a', 'a'].map((c) => watch.see(c));
    expect(seen.every((s) => s === undefined)).toBe(true);
    expect(watch.see('a')).toEqual({
      signal: 'repeat',
      detail: 'the same tool call 5 times in a row: a',
    });
  });

  it('shows a long call cut', () => {
    const watch = new RepeatWatch(2);
    watch.see('x'.repeat(300));
    expect(watch.see('x'.repeat(300))?.detail).toBe(
      `the same tool call 2 times in a row: ${'x'.repeat(200)}…`,
    );
  });
});
