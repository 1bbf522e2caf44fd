// The restart backoff both list+watch caches use (informer.ts, json-watch.ts); a module of its own so
// the webhook's cache does not import client-node through informer.ts.

/** backoffMs is the wait before restart number `failures` (1-based): base·2^(n-1), capped. */
export function backoffMs(failures: number, baseMs: number, maxMs: number): number {
  return Math.min(baseMs * 2 ** Math.max(0, failures - 1), maxMs);
}
