/**
 * OpenTelemetry: with OTEL_EXPORTER_OTLP_ENDPOINT set, `epicflow run` exports one trace
 * of the epic run over OTLP/HTTP, received here on a loopback endpoint: a span for the
 * epic, one per story inside it, and one per step inside each story, with the story's
 * executor, tokens, outcome and the judge's verdict as attributes.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { startCollector as start, type Collector } from '../support/otlp-collector.js';
import {
  CLEARED_VERDICT,
  configYaml,
  makeRepo,
  planMarkdown,
  run,
  scriptedCoder,
  type TestRepo,
} from './support/repo.js';

let repo: TestRepo | undefined;
let collector: Collector | undefined;
afterEach(async () => {
  repo?.cleanup();
  await collector?.close();
  repo = undefined;
  collector = undefined;
});

async function startCollector(): Promise<Collector> {
  collector = await start();
  return collector;
}

describe('an epic run traced with OpenTelemetry', () => {
  it('exports the epic, its stories and their steps as one trace', async () => {
    const otlp = await startCollector();
    const r = (repo = makeRepo({ 'README.md': 'x\n' }));
    const coder = scriptedCoder(r, 'coder', {
      a: {
        '*': {
          write: { 'src/a.txt': 'a\n' },
          stdout: 'EPICFLOW_USAGE {"input":1000,"output":200,"model":"m"}\n',
        },
      },
      b: { '*': { write: { 'src/b.txt': 'b\n' } } },
    });
    const judge = scriptedCoder(r, 'reviewer', { '*': { '*': { stdout: CLEARED_VERDICT } } });
    r.write(
      'epicflow.yml',
      configYaml({
        executors: [
          { id: 'bot', command: coder },
          { id: 'reviewer', command: judge, roles: ['judge'] },
        ],
        setup: 'echo ready',
        gates: ['true'],
        extra: 'judge: { executor: reviewer, rounds: 1 }',
      }),
    );
    r.commit('config');
    const out = await run(
      r,
      planMarkdown([
        { id: 'a', owns: ['src/a.txt'] },
        { id: 'b', owns: ['src/b.txt'], dependsOn: ['a'] },
      ]),
      {},
      {
        env: {
          ...process.env,
          OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
          OTEL_SERVICE_NAME: 'shop-epics',
        },
      },
    );
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: '' });
    expect(otlp.paths.every((p) => p.startsWith('POST /v1/traces application/json'))).toBe(true);

    const spans = otlp.spans;
    const epic = spans.find((s) => s.name === 'epic epic');
    expect(epic?.attributes).toMatchObject({ 'epicflow.epic': 'epic', 'epicflow.done': 2 });
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([epic?.traceId]));
    const storyA = spans.find((s) => s.name === 'story a');
    expect(storyA?.parentSpanId).toBe(epic?.spanId);
    expect(storyA?.attributes).toMatchObject({
      'epicflow.story': 'a',
      'epicflow.status': 'done',
      'epicflow.executors': 'bot',
      'epicflow.judge.cleared': true,
      'epicflow.judge.executor': 'reviewer',
    });
    // The coder's 1,200 measured tokens and the judge's (estimated).
    expect(Number(storyA?.attributes['epicflow.tokens'])).toBeGreaterThan(1200);
    const stepsOfA = spans.filter((s) => s.parentSpanId === storyA?.spanId).map((s) => s.name);
    expect(stepsOfA).toEqual(
      expect.arrayContaining(['setup', 'code', 'gates', 'judge', 'integrate']),
    );
    const turn = spans.find((s) => s.name === 'code' && s.parentSpanId === storyA?.spanId);
    expect(turn?.attributes).toMatchObject({
      'epicflow.round': 1,
      'epicflow.executor': 'bot',
      'epicflow.outcome': 'ok',
      'epicflow.tokens': 1200,
    });
    const merge = spans.find((s) => s.name === 'integrate' && s.parentSpanId === storyA?.spanId);
    expect(String(merge?.attributes['epicflow.merge_commit'])).toMatch(/^[0-9a-f]{40}$/);
    expect(spans.find((s) => s.name === 'story b')?.parentSpanId).toBe(epic?.spanId);
  });

  it('a failed story is an error span, and an unreachable collector does not fail the run', async () => {
    const otlp = await startCollector();
    const r = (repo = makeRepo({ 'README.md': 'x\n' }));
    const coder = scriptedCoder(r, 'coder', { a: { '*': { exit: 2 } } });
    r.write(
      'epicflow.yml',
      configYaml({
        executors: [{ id: 'bot', command: coder }],
        extra: 'retries: { transient: 0 }',
      }),
    );
    r.commit('config');
    const plan = planMarkdown([{ id: 'a', owns: ['src/a.txt'] }]);
    const failed = await run(
      r,
      plan,
      {},
      { env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } },
    );
    expect(failed.code).toBe(1);
    const story = otlp.spans.find((s) => s.name === 'story a');
    expect(story?.status).toMatchObject({ code: 2 });
    expect(story?.status?.message).toMatch(/^coder turn failed \(bot\)/);
    // Nothing listens there: the run ends as it would without a trace.
    await collector?.close();
    collector = undefined;
    const again = await run(
      r,
      plan,
      {},
      { env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } },
    );
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 1, stderr: '' });
  });
});
