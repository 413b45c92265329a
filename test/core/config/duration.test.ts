import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { MAX_DURATION_MS, durationToMs } from '../../../src/core/config/duration.js';

describe('durationToMs', () => {
  it.each([
    [90, 90_000],
    ['90s', 90_000],
    ['20m', 1_200_000],
    ['2h', 7_200_000],
    ['1h30m', 5_400_000],
    ['1h0m5s', 3_605_000],
  ])('%s is %i ms', (value, ms) => {
    expect(durationToMs(value)).toBe(ms);
  });

  it.each(['', 'soon', '20', '30m1h', '1.5h', '20 m', '-5s', '0s', '0', 0, -1, Number.NaN, '600h'])(
    'rejects %p',
    (value) => {
      expect(durationToMs(value)).toBeUndefined();
    },
  );

  it('reads hours, minutes and seconds in any combination', () => {
    fc.assert(
      fc.property(fc.nat(100), fc.nat(100), fc.nat(100), (h, m, s) => {
        const text = `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}`;
        const ms = ((h * 60 + m) * 60 + s) * 1000;
        expect(durationToMs(text)).toBe(text === '' || ms > MAX_DURATION_MS ? undefined : ms);
      }),
    );
  });
});
