/** Types of test/support/temp-folder.js (plain JavaScript, loaded by jest's configuration). */
export function testTempFolder(
  env?: Record<string, string | undefined>,
  shm?: string,
  room?: number,
): string | null;
export function ownFolder(dir: string): string;
