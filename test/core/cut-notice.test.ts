import { describe, expect, it } from '@jest/globals';
import { cutNotice, formatBytes, isCutNotice } from '../../src/core/cut-notice.js';

describe('cutNotice', () => {
  it('says how much was cut and how much is shown, in units people read', () => {
    expect(cutNotice(3.2 * 1024 * 1024, 1024 * 1024)).toBe('[… 3.2 MiB cut; last 1.0 MiB shown]');
    expect(cutNotice(13_000, 64)).toBe('[… 12.7 KiB cut; last 64 B shown]');
  });

  it('formats byte counts', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1024)).toBe('1.0 KiB');
    expect(formatBytes(256 * 1024 * 1024)).toBe('256.0 MiB');
    expect(formatBytes(3 * 1024 ** 3)).toBe('3.0 GiB');
  });

  it('recognises its own lines, and only those', () => {
    expect(isCutNotice(cutNotice(5_000_000, 262_144))).toBe(true);
    expect(isCutNotice(cutNotice(13_000, 64))).toBe(true);
    expect(isCutNotice('[… 3 earlier characters cut]')).toBe(false);
    expect(isCutNotice('not ok 1 - [… 3.2 MiB cut; last 1.0 MiB shown]')).toBe(false);
  });
});
