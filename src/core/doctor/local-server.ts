/**
 * Stories that would queue on one local model server. A coder runs on a local server when
 * its `health` URL, or a URL among its `env` values or `args`, names a loopback host
 * (`localhost`, `127.x.x.x`, `::1`), or, with no such URL, when its model names LM Studio's
 * or Ollama's provider (`lmstudio/…`, `ollama/…`: their default ports). Such a server
 * usually answers one request at a time: stories coded on it at once wait for each other
 * and may run into their timeouts. Pure.
 */
import type { EpicflowConfig, ExecutorConfig } from '../config/types.js';

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** The server a model provider's name means when no URL says otherwise. */
const PROVIDER_SERVERS: Readonly<Record<string, string>> = {
  lmstudio: 'http://127.0.0.1:1234',
  lm_studio: 'http://127.0.0.1:1234',
  ollama: 'http://127.0.0.1:11434',
  ollama_chat: 'http://127.0.0.1:11434',
};

interface LocalServer {
  /** The same for every way of naming one server (`localhost` or `127.0.0.1`). */
  readonly key: string;
  /** As the config names it (its origin). */
  readonly shown: string;
}

function loopback(text: string): LocalServer | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (!LOOPBACK.test(url.hostname)) return undefined;
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port;
  return { key: `${url.protocol}//loopback:${port}`, shown: url.origin };
}

/** The local model server an executor's config points at, if any. */
function localServerOf(e: ExecutorConfig): LocalServer | undefined {
  const texts = [e.health ?? '', ...Object.values(e.env), ...e.args];
  for (const url of texts.flatMap((t) => t.match(/https?:\/\/[^\s"'`,;]+/gi) ?? [])) {
    const found = loopback(url);
    if (found !== undefined) return found;
  }
  const provider = e.model?.split('/')[0]?.toLowerCase() ?? '';
  const server = e.model?.includes('/') === true ? PROVIDER_SERVERS[provider] : undefined;
  return server === undefined ? undefined : loopback(server);
}

/**
 * One warning per local model server that more than one story could be coded on at once:
 * its coders, the URL, and the settings that run them one at a time. `concurrency`: the
 * run's (`--concurrency`), else the config's.
 */
export function localServerWarnings(
  config: Pick<EpicflowConfig, 'executors' | 'concurrency'>,
  concurrency: number = config.concurrency,
): string[] {
  const groups = new Map<string, { shown: string; ids: string[]; slots: number }>();
  for (const e of config.executors) {
    if (!e.roles.includes('coder')) continue;
    const server = localServerOf(e);
    if (server === undefined) continue;
    const group = groups.get(server.key) ?? { shown: server.shown, ids: [], slots: 0 };
    group.ids.push(e.id);
    group.slots += e.slots;
    groups.set(server.key, group);
  }
  const warnings: string[] = [];
  for (const { shown, ids, slots } of groups.values()) {
    const parallel = Math.min(concurrency, slots);
    if (parallel < 2) continue;
    const who =
      ids.length === 1 ? `coder ${ids[0] ?? ''} (slots: ${slots})` : `coders ${ids.join(', ')}`;
    warnings.push(
      `${who} use${ids.length === 1 ? 's' : ''} one local model server, ${shown}: up to ${parallel} stories at once will queue on it and may run out of time; to code one story at a time there, set concurrency: 1 (or epicflow run --concurrency 1), or keep one executor on it with slots: 1`,
    );
  }
  return warnings;
}
