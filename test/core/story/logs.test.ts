import { describe, expect, it } from '@jest/globals';
import { isCutNotice } from '../../../src/core/cut-notice.js';
import { LogBuffer, logName, logSecrets, withLog } from '../../../src/core/story/index.js';

describe('a story log', () => {
  it('keeps every line while within its bound', () => {
    const log = new LogBuffer([], 1000);
    log.line('one');
    log.line('two');
    expect(log.text()).toBe('one\ntwo\n');
  });

  it('keeps the tail past its bound, and says so in its first line', () => {
    const log = new LogBuffer([], 100);
    for (let i = 0; i < 100; i += 1) log.line(`line ${i}`);
    const lines = log.text().trimEnd().split('\n');
    expect(isCutNotice(lines[0] as string)).toBe(true);
    expect(lines[lines.length - 1]).toBe('line 99');
    expect(lines).not.toContain('line 0');
    expect(lines.slice(1).join('\n').length).toBeLessThanOrEqual(100);
  });

  it("redacts the executors' resolved environment values, and not short ones", () => {
    const secrets = logSecrets({ bot: { KEY: 'sk-123456', FLAG: '1' }, other: { T: 'tok-abc' } });
    expect(secrets).toEqual(['sk-123456', 'tok-abc']);
    const log = new LogBuffer(secrets);
    log.line('using sk-123456 and tok-abc, flag 1');
    expect(log.text()).toBe('using [redacted] and [redacted], flag 1\n');
  });

  it('is named by story, attempt, order and kind; a reason names it', () => {
    expect(logName('api', 2, 3, 'gates')).toBe('logs/api/2-3-gates.log');
    expect(withLog('setup failed: boom', '/s/logs/api/2-1-setup.log')).toBe(
      'setup failed: boom (log: /s/logs/api/2-1-setup.log)',
    );
    expect(withLog('no changes', undefined)).toBe('no changes');
  });
});
