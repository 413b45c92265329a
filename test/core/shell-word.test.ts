import { describe, expect, it } from '@jest/globals';
import { shellWord } from '../../src/core/shell-word.js';

describe('shellWord', () => {
  it('leaves a word no shell reads specially as it is', () => {
    expect(shellWord('app')).toBe('app');
    expect(shellWord('/tmp/x-1.2/@scope+y_z')).toBe('/tmp/x-1.2/@scope+y_z');
  });

  it('quotes anything a shell would split, expand or run', () => {
    expect(shellWord('my app')).toBe(`'my app'`);
    expect(shellWord('$(touch pwned)')).toBe(`'$(touch pwned)'`);
    expect(shellWord('*')).toBe(`'*'`);
    expect(shellWord('a\nb')).toBe(`'a\nb'`);
    expect(shellWord('')).toBe(`''`);
  });

  it("writes each single quote as '\\'' so the word cannot be closed early", () => {
    expect(shellWord(`it's`)).toBe(`'it'\\''s'`);
    expect(shellWord(`'; rm -rf ~; '`)).toBe(`''\\''; rm -rf ~; '\\'''`);
  });
});
