/**
 * Asks an executor's `health` URL (docs/executors.md): an HTTP GET, healthy on a 2xx
 * answer within 5 seconds. Anything else (another status, a refused connection, a
 * timeout) is not healthy, and the outage lasts its time.
 */
const TIMEOUT_MS = 5_000;

export async function probeHealth(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, {
      method: 'GET',
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    // The body is not needed; read it away so the connection is released.
    await response.arrayBuffer().catch(() => undefined);
    return response.status >= 200 && response.status <= 299;
  } catch {
    return false;
  }
}
