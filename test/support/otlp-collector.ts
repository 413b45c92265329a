/** An OTLP/HTTP JSON endpoint on 127.0.0.1 that keeps every span it is sent (tests of tracing). */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, string | number | boolean>;
  status?: { code?: number; message?: string };
}

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
};

export interface Collector {
  readonly url: string;
  readonly spans: ReceivedSpan[];
  readonly paths: string[];
  close(): Promise<void>;
}

export async function startCollector(): Promise<Collector> {
  const spans: ReceivedSpan[] = [];
  const paths: string[] = [];
  const collector: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: {
          scopeSpans: {
            spans: (Omit<ReceivedSpan, 'attributes'> & {
              attributes?: { key: string; value: OtlpValue }[];
            })[];
          }[];
        }[];
      };
      for (const rs of body.resourceSpans) {
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            const attributes: ReceivedSpan['attributes'] = {};
            for (const a of s.attributes ?? []) {
              const v = a.value;
              attributes[a.key] =
                v.stringValue ?? v.boolValue ?? v.doubleValue ?? Number(v.intValue ?? NaN);
            }
            spans.push({ ...s, attributes });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  const { port } = collector.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    paths,
    close: () => new Promise((r) => collector.close(() => r())),
  };
}
