import { describe, expect, it } from '@jest/globals';
import { nearMiss } from '../../src/core/near-miss.js';

const FIELDS = ['id', 'title', 'owns', 'reads', 'dependsOn', 'acceptance'];

describe('nearMiss', () => {
  it('forgives case, dashes and underscores', () => {
    expect(nearMiss('depends_on', FIELDS)).toBe('dependsOn');
    expect(nearMiss('DEPENDS-ON', FIELDS)).toBe('dependsOn');
  });

  it('forgives one typo in a short name and two in a longer one', () => {
    expect(nearMiss('own', FIELDS)).toBe('owns');
    expect(nearMiss('ttle', FIELDS)).toBe('title');
    expect(nearMiss('acceptanse', FIELDS)).toBe('acceptance');
    expect(nearMiss('dependOnn', FIELDS)).toBe('dependsOn');
    // Two typos in four letters is another word.
    expect(nearMiss('idea', FIELDS)).toBeUndefined();
  });

  it('suggests the nearest of several', () => {
    expect(nearMiss('read', ['reads', 'ready'])).toBe('reads');
    expect(nearMiss('titles', ['title', 'titled'])).toBe('title');
  });

  it("takes another tool's word first, even where a spelling is near", () => {
    // `needs` is two letters from `reads`.
    expect(nearMiss('needs', FIELDS)).toBe('reads');
    expect(nearMiss('needs', FIELDS, { needs: 'dependsOn' })).toBe('dependsOn');
    expect(nearMiss('Blocked_By', FIELDS, { blockedBy: 'dependsOn' })).toBe('dependsOn');
  });

  it('never suggests an alias that names no known field', () => {
    expect(nearMiss('needs', ['id', 'title'], { needs: 'dependsOn' })).toBeUndefined();
  });

  it('says nothing for a name far from all, or a very long one', () => {
    expect(nearMiss('colour', FIELDS)).toBeUndefined();
    expect(nearMiss('x'.repeat(200), ['x'.repeat(199)])).toBeUndefined();
  });
});
