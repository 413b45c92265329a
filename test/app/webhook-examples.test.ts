/**
 * Every official example payload of the events the App subscribes to (app.yml), the older
 * shapes among them, delivered as is to the App: each is answered 2xx and none makes the
 * App log an error (the harness fails a test on any error line).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import YAML from 'yaml';
import { planBody, startApp, startEpic, type AppWorld } from './harness.js';

const require = createRequire(import.meta.url);
const GROUPS = require('@octokit/webhooks-examples') as {
  name: string;
  examples: Record<string, unknown>[];
}[];
const SUBSCRIBED = (
  YAML.parse(readFileSync(new URL('../../app.yml', import.meta.url), 'utf8')) as {
    default_events: string[];
  }
).default_events;

const CASES = GROUPS.filter((g) => SUBSCRIBED.includes(g.name)).flatMap((g) =>
  g.examples.map((payload, i): [string, Record<string, unknown>] => [
    `${g.name}${typeof payload['action'] === 'string' ? `.${payload['action']}` : ''} #${i}`,
    payload,
  ]),
);

let w: AppWorld;
/**
 * The world's repository, installation and sender: GitHub only sends an App deliveries of
 * repositories it is installed on, so each example is delivered as about this one.
 */
let context: Record<string, unknown>;
beforeAll(async () => {
  w = await startApp();
  await startEpic(w, 'Examples', planBody([{ id: 'api' }]));
  const first = w.gh.deliveries.find((d) => d.event === 'issues');
  if (first === undefined) throw new Error('no issues delivery');
  const { repository, installation, sender } = first.payload as Record<string, unknown>;
  context = { repository, installation, sender };
});
afterAll(() => w.close());

describe('official webhook examples', () => {
  it('cover every subscribed event but sub_issues (the package has none)', () => {
    const covered = new Set(CASES.map(([name]) => name.split(/[.# ]/)[0]));
    expect(SUBSCRIBED.filter((e) => !covered.has(e))).toEqual(['sub_issues']);
  });

  it.each(CASES)('%s, on this installation: 2xx, no error', async (_name, payload) => {
    const event = _name.split(/[.# ]/)[0] as string;
    const status = await w.deliverRaw(event, { ...payload, ...context });
    expect(status).toBeGreaterThanOrEqual(200);
    expect(status).toBeLessThan(300);
  });
});
