/**
 * The GitHub App benchmark, through the GitHub double with a real probot
 * server: how fast deliveries are acknowledged (the App answers once the
 * delivery is verified and queued; with `EPICFLOW_SYNC_WEBHOOKS=1` it answers
 * after acting, so that line is the whole handling time), how long the work
 * after the answer takes, and how many GitHub requests a whole 20-story epic
 * costs per story, without and with a Projects board. Printing only; goals in
 * the last column.
 */
import {
  completeStory,
  dispatched,
  OWNER,
  planBody,
  REPO,
  startApp,
  startEpic,
  writeConfig,
  type AppWorld,
} from '../test/app/harness.js';
import { quantile } from './support/stats.js';

const STORIES = 20;
const IGNORED = 200;
const COMMANDS = 40;

/** Milliseconds from sending a delivery to its answer, and until the App is idle again. */
async function ack(w: AppWorld, send: () => void): Promise<{ ack: number; done: number }> {
  const before = w.gh.deliveries.length;
  const t0 = performance.now();
  send();
  await w.gh.idle();
  const done = performance.now() - t0;
  const sent = w.gh.deliveries[before];
  return { ack: sent?.durationMs ?? done, done };
}

function row(label: string, values: readonly number[]): string {
  const p = (q: number): string => quantile(values, q).toFixed(0);
  return `| ${label} | ${values.length} | ${p(0.5)} ms | ${p(0.99)} ms |`;
}

/** 20 stories: 4 independent chains of 5, so several run at once. */
function twentyStories(): { id: string; dependsOn?: string[] }[] {
  return Array.from({ length: STORIES }, (_, i) => {
    const id = `s${i}`;
    return i < 4 ? { id } : { id, dependsOn: [`s${i - 4}`] };
  });
}

interface EpicCounts {
  readonly rest: number;
  readonly jobs: number;
  readonly graphql: number;
  readonly created: number;
  readonly hooks: number;
  readonly restByOperation: Record<string, number>;
  readonly graphqlByOperation: Record<string, number>;
}

const BOARD_URL = `https://github.com/orgs/${OWNER}/projects/1`;

/** A whole 20-story epic from the label to the last story done, optionally with a board. */
async function epicCounts(board: boolean): Promise<EpicCounts> {
  const w = await startApp();
  try {
    const { gh } = w;
    if (board) {
      // An empty board: the App gives it its fields, then adds each story's item.
      gh.seed.project({ owner: OWNER, number: 1, title: 'Epics' });
      await writeConfig(w, `labels: { epic: epic }\nboard: { project: "${BOARD_URL}" }\n`);
    }
    const before = snapshot(w);
    const jobs0 = w.jobRequests.rest;
    const epic = await startEpic(w, 'Twenty', planBody(twentyStories()));
    const completed = new Set<string>();
    while (completed.size < STORIES) {
      const running = dispatched(gh, epic).filter((d) => !completed.has(d));
      if (running.length === 0) throw new Error('nothing running');
      for (const d of running) {
        completed.add(d);
        await completeStory(w, epic, d.split('#')[0] ?? '');
      }
    }
    const after = snapshot(w);
    return {
      rest: after.rest - before.rest,
      jobs: w.jobRequests.rest - jobs0,
      graphql: after.graphql - before.graphql,
      created: after.created - before.created,
      hooks: after.hooks - before.hooks,
      restByOperation: { ...gh.stats.rest },
      graphqlByOperation: { ...gh.stats.graphql },
    };
  } finally {
    await w.close();
  }
}

async function requestsPerStory(): Promise<string[]> {
  const plain = await epicCounts(false);
  const board = await epicCounts(true);
  const per = (n: number): string => (n / STORIES).toFixed(1);
  const line = (label: string, f: (c: EpicCounts) => number, goal: string): string =>
    `| ${label} | ${per(f(plain))} | ${per(f(board))} | ${goal} |`;
  const byOperation = (title: string, counts: Record<string, number>): string[] => [
    `| ${title} | count |`,
    '| --- | --- |',
    ...Object.entries(counts)
      .sort((a, b) => b[1] - a[1])
      .map(([op, n]) => `| ${op} | ${n} |`),
  ];
  return [
    '| per story, over a 20-story epic | no board | with a board | goal |',
    '| --- | --- | --- | --- |',
    line('REST requests (App and story jobs)', (c) => c.rest, '—'),
    line('REST requests by the App', (c) => c.rest - c.jobs, '≤ 8'),
    line('GraphQL requests', (c) => c.graphql, '≤ 2'),
    line('content-creating writes', (c) => c.created, '≤ 4'),
    line('webhook deliveries', (c) => c.hooks, '—'),
    '',
    '(the story jobs’ own requests — branch, commit, merge, record — are counted in the first line only;',
    'writes and GraphQL are the App’s: the simulated jobs make neither creations nor GraphQL calls)',
    '',
    ...byOperation('REST requests by operation, whole epic, no board', plain.restByOperation),
    '',
    ...byOperation(
      'GraphQL requests by operation, whole epic, with a board',
      board.graphqlByOperation,
    ),
  ];
}

function snapshot(w: AppWorld): { rest: number; graphql: number; created: number; hooks: number } {
  const sum = (o: Record<string, number>): number => Object.values(o).reduce((a, b) => a + b, 0);
  return {
    rest: sum(w.gh.stats.rest),
    graphql: sum(w.gh.stats.graphql),
    created: w.gh.stats.contentCreating,
    hooks: w.gh.stats.webhookDeliveries,
  };
}

async function acknowledgement(sync: boolean): Promise<string[]> {
  const w = await startApp({ sync });
  try {
    const epic = await startEpic(
      w,
      'Acks',
      planBody([{ id: 'api' }, { id: 'ui', dependsOn: ['api'] }]),
    );
    const comment = (body: string) => () =>
      void w.gh.act.comment('alice', { owner: OWNER, repo: REPO, number: epic, body });
    const ignored: { ack: number; done: number }[] = [];
    for (let i = 0; i < IGNORED; i++) ignored.push(await ack(w, comment(`LGTM ${i}`)));
    const commands: { ack: number; done: number }[] = [];
    for (let i = 0; i < COMMANDS; i++) commands.push(await ack(w, comment('/status')));
    const acks = (xs: readonly { ack: number }[]): number[] => xs.map((x) => x.ack);
    return [
      `mode: ${w.sync ? 'synchronous (answer after acting)' : 'queued (answer, then act)'}`,
      '',
      '| deliveries | count | p50 | p99 |',
      '| --- | --- | --- | --- |',
      row('plain comments (ignored): answer', acks(ignored)),
      row('`/status` (a full decision): answer', acks(commands)),
      row('all: answer', [...acks(ignored), ...acks(commands)]),
      row(
        '`/status`: until handled',
        commands.map((c) => c.done),
      ),
      '',
      'goal: answer p99 ≤ 300 ms',
    ];
  } finally {
    await w.close();
  }
}

export async function run(): Promise<void> {
  console.log((await acknowledgement(false)).join('\n'));
  console.log('');
  console.log((await acknowledgement(true)).join('\n'));
  console.log('');
  console.log((await requestsPerStory()).join('\n'));
}
