/**
 * jest `setupFilesAfterEnv`: after each test, every registered check (see
 * checks.ts) — the GitHub doubles still running have no contract violations,
 * the Apps under test logged no error the test did not expect.
 */
import { afterEach } from '@jest/globals';
import { runChecks } from './checks.js';

afterEach(() => {
  runChecks();
});
