/**
 * Checks that run after every test on their own, so a test cannot forget them:
 * a started GitHub double registers "no contract violations", an App under test
 * registers "no unexpected error in its log". `after-each.ts` (jest's
 * `setupFilesAfterEnv`) runs every registered check after each test.
 *
 * The registry lives on `globalThis`, not in a module, so the setup file does not
 * have to import (and every test file load) the double or probot.
 */
export interface AfterEachCheck {
  /** Shown with a failure: which double, which App. */
  readonly name: string;
  /** Throws when the test broke the promise. */
  check(): void;
}

const KEY = Symbol.for('epicflow.test.after-each-checks');

function registry(): Set<AfterEachCheck> {
  const g = globalThis as { [KEY]?: Set<AfterEachCheck> };
  g[KEY] ??= new Set();
  return g[KEY];
}

/** Registers a check until the returned function is called (when its subject closes). */
export function registerCheck(check: AfterEachCheck): () => void {
  registry().add(check);
  return () => {
    registry().delete(check);
  };
}

/** Runs every registered check; throws one error listing every failure. */
export function runChecks(): void {
  const failures: string[] = [];
  for (const c of registry()) {
    try {
      c.check();
    } catch (e) {
      failures.push(`${c.name}: ${(e as Error).message}`);
    }
  }
  if (failures.length > 0) throw new Error(failures.join('\n\n'));
}
