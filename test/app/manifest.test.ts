/**
 * `app.yml`, the App manifest GitHub's manifest flow registers, against PRODUCT §9.4 and
 * against the webhook handlers the App really registers with probot.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, expect, it, jest } from '@jest/globals';
import { Probot } from 'probot';
import { parse } from 'yaml';
import { createEpicflowApp } from '../../src/app/index.js';

const MANIFEST = new URL('../../app.yml', import.meta.url);

/**
 * Copied from PRODUCT §9.4 ("App permissions: Issues RW, Pull requests RW, Contents RW,
 * Actions RW, Metadata R, Organization projects RW (only with a board). Events: `issues`,
 * `issue_comment`, `workflow_run`, `sub_issues`."), in the manifest's names and levels.
 */
const SPEC_PERMISSIONS = {
  issues: 'write',
  pull_requests: 'write',
  contents: 'write',
  actions: 'write',
  metadata: 'read',
  organization_projects: 'write',
};
const SPEC_EVENTS = ['issues', 'issue_comment', 'workflow_run', 'sub_issues'];

interface Manifest {
  readonly default_permissions?: unknown;
  readonly default_events?: unknown;
  readonly [key: string]: unknown;
}

async function manifest(): Promise<Manifest> {
  return parse(await readFile(MANIFEST, 'utf8')) as Manifest;
}

/** The webhook event names (without the action) the App subscribes to, in probot. */
function subscribedEvents(): string[] {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const probot = new Probot({
    appId: 1,
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    secret: 'manifest-test',
    logLevel: 'fatal',
  });
  // Passes through to probot (which rejects unknown event names); only records the names.
  const on = jest.spyOn(probot, 'on');
  createEpicflowApp()(probot);
  const names = on.mock.calls.flatMap(([event]) => (Array.isArray(event) ? event : [event]));
  return [...new Set(names.map((n) => String(n).split('.')[0] ?? ''))].sort();
}

describe('app.yml', () => {
  it('asks for exactly the permissions of PRODUCT §9.4', async () => {
    expect((await manifest()).default_permissions).toEqual(SPEC_PERMISSIONS);
  });

  it('subscribes to exactly the events of PRODUCT §9.4', async () => {
    const events = (await manifest()).default_events;
    expect(Array.isArray(events) ? [...(events as unknown[])].sort() : events).toEqual(
      [...SPEC_EVENTS].sort(),
    );
  });

  it('subscribes to every event the App handles, and to nothing it ignores', async () => {
    const events = (await manifest()).default_events as string[];
    expect([...events].sort()).toEqual(subscribedEvents());
  });

  it('is a private App with a name, as the manifest flow requires', async () => {
    const m = await manifest();
    expect(m['name']).toBe('epicflow');
    expect(m['public']).toBe(false);
    expect(typeof m['url']).toBe('string');
  });
});
