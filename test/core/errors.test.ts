import { describe, expect, it } from '@jest/globals';
import { describeError, describeErrorLine, EpicflowError, oneLine } from '../../src/core/errors.js';

describe('an error as one line', () => {
  it('joins the message and its detail lines with " | ", without their indentation', () => {
    const e = new EpicflowError('git', 'cannot merge story a', {
      details: ['CONFLICT (content): a.txt', '', 'Automatic merge failed'],
    });
    expect(describeError(e)).toBe(
      'cannot merge story a\n  CONFLICT (content): a.txt\n  \n  Automatic merge failed',
    );
    expect(describeErrorLine(e)).toBe(
      'cannot merge story a | CONFLICT (content): a.txt | Automatic merge failed',
    );
  });

  it('renders what is not an EpicflowError as an internal error, on one line', () => {
    expect(describeErrorLine(new Error('boom\n  at x'))).toBe('internal error: boom | at x');
  });

  it('leaves a one-line text as it is, and blank text empty', () => {
    expect(oneLine('  just this  ')).toBe('just this');
    expect(oneLine('\n \n')).toBe('');
  });
});
