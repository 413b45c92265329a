/**
 * Webhook deliveries as GitHub sends them: JSON body signed with HMAC-SHA256
 * (`X-Hub-Signature-256`, via @octokit/webhooks-methods) plus the legacy SHA-1 header,
 * a delivery GUID that stays the same on redelivery, and a payload that starts from
 * @octokit/webhooks-examples and is validated against GitHub's webhook description.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { sign } from '@octokit/webhooks-methods';
import type { Json } from './context.js';
import { formatAjvErrors, webhookSpec } from './spec.js';

const require = createRequire(import.meta.url);

interface ExampleGroup {
  readonly name: string;
  readonly examples: readonly Json[];
}

let examples: readonly ExampleGroup[] | undefined;

/** A copy of the community example payload for `event.action`, or `{}` when none exists. */
function examplePayload(event: string, action: string | undefined): Json {
  examples ??= require('@octokit/webhooks-examples') as ExampleGroup[];
  const group = examples.find((g) => g.name === event);
  const ex = group?.examples.find((e) => action === undefined || e['action'] === action);
  return ex ? (structuredClone(ex) as Json) : {};
}

export interface WebhookTarget {
  readonly url: string;
  readonly secret: string;
}

/** Something that keeps working after it answered a delivery. */
export interface BackgroundWork {
  busy(): boolean;
  idle(): Promise<void>;
}

export interface Delivery {
  readonly id: string;
  readonly event: string;
  readonly action: string | undefined;
  readonly payload: Json;
  readonly body: string;
  readonly signature256: string;
  /** HTTP status of the last attempt; undefined while pending or when no target is set. */
  status: number | undefined;
  /** Milliseconds the receiver took to answer the last attempt (benchmarks). */
  durationMs: number | undefined;
  error: string | undefined;
  attempts: number;
}

export class Webhooks {
  readonly deliveries: Delivery[] = [];
  target: WebhookTarget | undefined;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly hookId: number,
    private readonly appId: () => number,
    private readonly onViolation: (operation: string, message: string) => void,
    private readonly count: () => void,
    /** Told when a delivery starts or ends (the double's clock watches traffic). */
    private readonly activity: () => void = () => undefined,
  ) {}

  /** Deliveries being signed or sent, not yet answered. */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Record and deliver an event. `fields` replace the example's top-level keys; keys of the
   * example that describe other accounts (`enterprise`, `organization`) are dropped unless given.
   */
  emit(event: string, action: string | undefined, fields: Json): Promise<Delivery> {
    // Tracked from the start so `idle()` also waits for deliveries still being signed.
    const p = this.record(event, action, fields);
    this.track(p.then(() => undefined));
    return p;
  }

  private async record(event: string, action: string | undefined, fields: Json): Promise<Delivery> {
    const payload: Json = { ...examplePayload(event, action) };
    delete payload['enterprise'];
    delete payload['organization'];
    delete payload['changes'];
    Object.assign(payload, action === undefined ? {} : { action }, fields);
    for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k];
    const name = `${event}${action === undefined ? '' : `.${action}`}`;
    try {
      const validate = webhookSpec().validator(event, action);
      if (!validate(payload)) {
        this.onViolation(`webhook ${name}`, `payload: ${formatAjvErrors(validate.errors)}`);
      }
    } catch (e) {
      this.onViolation(`webhook ${name}`, (e as Error).message);
    }
    const body = JSON.stringify(payload);
    const delivery: Delivery = {
      id: randomUUID(),
      event,
      action,
      payload,
      body,
      signature256: this.target ? await sign(this.target.secret, body) : '',
      status: undefined,
      durationMs: undefined,
      error: undefined,
      attempts: 0,
    };
    this.deliveries.push(delivery);
    this.send(delivery);
    return delivery;
  }

  /** Send a recorded delivery again, with the same delivery id (as GitHub's redelivery does). */
  async redeliver(id: string): Promise<Delivery> {
    const d = this.deliveries.find((x) => x.id === id);
    if (!d) throw new Error(`no webhook delivery ${id}`);
    this.send(d);
    await this.idle();
    return d;
  }

  /** Work the receiver does after answering (e.g. an App's queue), waited for by `idle()`. */
  readonly background: BackgroundWork[] = [];

  /**
   * Resolves when every delivery in flight has been answered and the receiver's
   * background work is done (that work may send more deliveries, so both are
   * checked again until neither is busy).
   */
  async idle(): Promise<void> {
    for (;;) {
      if (this.pending.size > 0) {
        await Promise.all([...this.pending]);
        continue;
      }
      const busy = this.background.filter((b) => b.busy());
      if (busy.length === 0) return;
      await Promise.all(busy.map((b) => b.idle().catch(() => undefined)));
    }
  }

  private send(d: Delivery): void {
    const target = this.target;
    if (!target) return;
    const p = (async (): Promise<void> => {
      d.attempts += 1;
      this.count();
      try {
        const signature256 = await sign(target.secret, d.body);
        const started = performance.now();
        const res = await fetch(target.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'GitHub-Hookshot/double',
            'x-github-event': d.event,
            'x-github-delivery': d.id,
            'x-github-hook-id': String(this.hookId),
            'x-github-hook-installation-target-id': String(this.appId()),
            'x-github-hook-installation-target-type': 'integration',
            'x-hub-signature-256': signature256,
            'x-hub-signature': `sha1=${createHmac('sha1', target.secret).update(d.body).digest('hex')}`,
          },
          body: d.body,
        });
        await res.arrayBuffer();
        d.durationMs = performance.now() - started;
        d.status = res.status;
        d.error = undefined;
      } catch (e) {
        d.status = undefined;
        d.error = (e as Error).message;
      }
    })();
    this.track(p);
  }

  private track(p: Promise<void>): void {
    const settled = p.catch(() => undefined);
    this.pending.add(settled);
    this.activity();
    void settled.finally(() => {
      this.pending.delete(settled);
      this.activity();
    });
  }
}
