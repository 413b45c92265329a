/**
 * The App and the bundled Action together: a real probot App (test/app/harness.ts)
 * receives the double's webhooks and dispatches story jobs; each job is the
 * Action's bundle run as a process (`runJob`) in the returned `ActionWorld`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type AppWorld } from '../../app/harness.js';
import { agentDumps, buildBundle, CHECK_SCRIPT, type ActionWorld } from './world.js';

export interface AppActionWorld {
  readonly app: AppWorld;
  /** The same GitHub double as `app.gh`, as the Action's helpers take it. */
  readonly w: ActionWorld;
  /** The bundle's `index.js`. */
  readonly bundle: string;
  close(): Promise<void>;
}

/**
 * Starts the App with `.github/epicflow.yml` as `config(dumps)` gives it, in a folder of its
 * own (`epicflow-<prefix>-…`, removed by `w.close()`): the App and the double, no bundle.
 */
export async function startAppWorld(
  prefix: string,
  config: (dumps: string) => string,
): Promise<{ readonly app: AppWorld; readonly w: ActionWorld }> {
  const dir = await mkdtemp(join(tmpdir(), `epicflow-${prefix}-`));
  const dumps = await agentDumps(dir);
  const app = await startApp({
    files: { 'check.sh': CHECK_SCRIPT, '.github/epicflow.yml': config(dumps) },
  });
  const w: ActionWorld = {
    gh: app.gh,
    bot: app.bot,
    alice: app.alice,
    repo: app.repo,
    dir,
    dumps,
    close: async () => {
      await app.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return { app, w };
}

/** `startAppWorld`, and the bundle built in its folder. */
export async function startAppActionWorld(
  prefix: string,
  config: (dumps: string) => string,
): Promise<AppActionWorld> {
  const { app, w } = await startAppWorld(prefix, config);
  const bundle = await buildBundle(join(w.dir, 'bundle'));
  return { app, w, bundle, close: () => w.close() };
}
