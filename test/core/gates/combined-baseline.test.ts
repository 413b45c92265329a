import { describe, expect, it } from '@jest/globals';
import { combinedBaseline, triageGate, type GateRun } from '../../../src/core/gates/index.js';

const red = (output: string, extra: Partial<GateRun> = {}): GateRun => ({
  command: 'npm test',
  ok: false,
  output,
  ...extra,
});

describe('two runs of a gate on the base as one baseline', () => {
  it('charges a story only with failing lines new against both runs', () => {
    const base = combinedBaseline(red('not ok 1 - a\n'), red('not ok 2 - b\n'));
    expect(base).toMatchObject({ ok: false, combined: true });
    expect(triageGate(red('not ok 2 - b\n'), base).status).toBe('inherited');
    expect(triageGate(red('not ok 1 - a\nnot ok 2 - b\n'), base).status).toBe('inherited');
    expect(triageGate(red('not ok 2 - b\nnot ok 3 - c\n'), base)).toMatchObject({
      status: 'new',
      newLines: ['not ok - c'],
    });
  });

  it('is red when either run was, keeps the lower pass count, and a timeout of either', () => {
    const base = combinedBaseline(
      { command: 'npm test', ok: true, output: '# pass 10\n', passCount: 10 },
      red('not ok 1 - a\n# pass 9\n', { passCount: 9, timedOut: true }),
    );
    expect(base).toMatchObject({ ok: false, passCount: 9, timedOut: true, combined: true });
  });

  it('compares hashed lines of both runs when each has them', () => {
    const base = combinedBaseline(
      red('x\n', { failures: [], lineKeys: ['k1'] }),
      red('y\n', { failures: [], lineKeys: ['k2'] }),
    );
    expect(base.lineKeys).toEqual(['k1', 'k2']);
    expect(combinedBaseline(red('x\n', { lineKeys: ['k1'] }), red('y\n'))).not.toHaveProperty(
      'lineKeys',
    );
  });
});
