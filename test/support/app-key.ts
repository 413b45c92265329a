/**
 * The private key the tests' GitHub Apps sign their JWTs with: made once and kept in the
 * tests' cache folder (a 2048-bit RSA key takes 100–300 ms to make, and the App tests start
 * hundreds of Apps). A test that needs a key of its own (a revoked or a foreign one) makes
 * it with `generateKeyPairSync`.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { testCacheDir } from './cache-dir.js';

let pem: string | undefined;

/** The shared test App key, PKCS#8 PEM. */
export function testAppKey(): string {
  if (pem !== undefined) return pem;
  const dir = testCacheDir('keys');
  const file = join(dir, 'test-app.pem');
  try {
    pem = readFileSync(file, 'utf8');
  } catch {
    const made = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const scratch = `${file}.${process.pid}`;
    writeFileSync(scratch, made, { mode: 0o600 });
    // Another test process may have made one meanwhile: either key is as good.
    renameSync(scratch, file);
    pem = made;
  }
  return pem;
}

/**
 * A key of the test's own, in both forms an App key comes in: GitHub hands out PKCS#1
 * ("BEGIN RSA PRIVATE KEY"); the action also takes PKCS#8. Each call makes a new one.
 */
export function freshAppKey(): { pkcs1: string; pkcs8: string } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    pkcs1: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    pkcs8: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}
