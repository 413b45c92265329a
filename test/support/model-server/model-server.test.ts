import { afterEach, describe, expect, it } from '@jest/globals';
import { request } from 'node:http';
import { startModelServer } from './index.js';
import type { ModelServer } from './index.js';

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const usage = { input: 10, cachedInput: 2, output: 3 };

async function post(path: string, body: unknown): Promise<Response> {
  if (!server) throw new Error('no server');
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('scripted model server', () => {
  it('replays steps in order in each wire format and repeats the last one', async () => {
    server = await startModelServer([
      { kind: 'tool', command: 'touch a', usage },
      { kind: 'auth' },
    ]);
    const first = await (await post('/v1/responses', { model: 'm', tools: [{}] })).text();
    expect(first).toContain('event: response.completed');
    expect(first).toContain('"name":"exec_command"');
    expect(first).toContain('"input_tokens":12');
    expect((await post('/v1/messages?beta=true', { tools: [{}] })).status).toBe(401);
    expect((await post('/v1/messages?beta=true', { tools: [{}] })).status).toBe(401);
    expect(server.modelRequests().map((r) => r.step)).toEqual([0, 1, 1]);
  });

  it('answers claude side requests without tools outside the script', async () => {
    server = await startModelServer([{ kind: 'overload' }]);
    const side = await (await post('/v1/messages', { model: 'haiku' })).text();
    expect(side).toContain('event: message_stop');
    expect((await post('/v1/messages', { tools: [{}] })).status).toBe(529);
    expect(server.modelRequests()).toHaveLength(1);
  });

  it('answers the HEAD probe and records proxy CONNECTs as stray traffic', async () => {
    server = await startModelServer([{ kind: 'hang' }]);
    expect((await fetch(server.url, { method: 'HEAD' })).status).toBe(200);
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port: server?.port,
        method: 'CONNECT',
        path: 'api.example.com:443',
      });
      req.on('connect', (res, socket) => {
        socket.destroy();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
    expect(server.strayRequests().map((r) => r.path)).toEqual(['api.example.com:443']);
    expect(server.connections()).toBeGreaterThanOrEqual(2);
  });
});
