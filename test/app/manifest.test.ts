/**
 * `app.yml` and `app-board.yml`, the App manifests GitHub's manifest flow registers,
 * against the permission list of the product and against the webhook handlers the App
 * really registers with probot. Organization projects are asked for only by the board
 * variant: an App without a board never holds that permission.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describe, expect, it, jest } from '@jest/globals';
import { Probot } from 'probot';
import { parse } from 'yaml';
import { createEpicflowApp } from '../../src/app/index.js';

const MANIFESTS = {
  'app.yml': new URL('../../app.yml', import.meta.url),
  'app-board.yml': new URL('../../app-board.yml', import.meta.url),
};
type ManifestName = keyof typeof MANIFESTS;

/**
 * The product's list ("App permissions: Issues RW, Pull requests RW, Contents RW,
 * Actions RW, Metadata R, Organization projects RW (only with a board). Events: `issues`,
 * `issue_comment`, `workflow_run`, `sub_issues`."), and `pull_request_review` for review rounds,
 * in the manifest's names and levels.
 */
const BASE_PERMISSIONS = {
  issues: 'write',
  pull_requests: 'write',
  contents: 'write',
  actions: 'write',
  metadata: 'read',
};
const SPEC_PERMISSIONS: Record<ManifestName, Record<string, string>> = {
  'app.yml': BASE_PERMISSIONS,
  'app-board.yml': { ...BASE_PERMISSIONS, organization_projects: 'write' },
};
const SPEC_EVENTS = [
  'issues',
  'issue_comment',
  'workflow_run',
  'sub_issues',
  'pull_request_review',
];
/** Keeping epics mergeable and finishing them (docs/landing.md). */
const LANDING_EVENTS = ['push', 'pull_request'];

interface Manifest {
  readonly default_permissions?: unknown;
  readonly default_events?: unknown;
  readonly [key: string]: unknown;
}

async function manifest(name: ManifestName): Promise<Manifest> {
  return parse(await readFile(MANIFESTS[name], 'utf8')) as Manifest;
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

describe.each(Object.keys(MANIFESTS) as ManifestName[])('%s', (name) => {
  it('asks for exactly the permissions of the product (organization projects only with a board)', async () => {
    expect((await manifest(name)).default_permissions).toEqual(SPEC_PERMISSIONS[name]);
  });

  it('subscribes to exactly the events of the product', async () => {
    const events = (await manifest(name)).default_events;
    expect(Array.isArray(events) ? [...(events as unknown[])].sort() : events).toEqual(
      [...SPEC_EVENTS, ...LANDING_EVENTS].sort(),
    );
  });

  it('subscribes to every event the App handles, and to nothing it ignores', async () => {
    const events = (await manifest(name)).default_events as string[];
    expect([...events].sort()).toEqual(subscribedEvents());
  });

  it('is a private App with a name, as the manifest flow requires', async () => {
    const m = await manifest(name);
    expect(m['name']).toBe('epicflow');
    expect(m['public']).toBe(false);
    expect(typeof m['url']).toBe('string');
  });
});

describe('the two manifests', () => {
  it('are the same App but for the board permission', async () => {
    const { default_permissions: board, ...rest } = await manifest('app-board.yml');
    const { default_permissions: plain, ...same } = await manifest('app.yml');
    expect(rest).toEqual(same);
    expect({ ...(plain as object), organization_projects: 'write' }).toEqual(board);
  });
});
