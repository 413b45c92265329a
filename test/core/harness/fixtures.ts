/** Reads recorded and documented CLI output streams from test/fixtures/streams. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const NOW = new Date('2026-11-30T08:57:00Z');

export function stream(cli: string, name: string): string {
  return readFileSync(join('test', 'fixtures', 'streams', cli, name), 'utf8');
}
