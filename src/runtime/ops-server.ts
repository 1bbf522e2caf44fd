// The plain-HTTP operations port of both processes: /metrics, /healthz (the process is alive) and
// /readyz (it should get traffic: false before start-up completes and from the start of shutdown).
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

/** Readiness is a switch the process flips; `reason` is shown on /readyz while not ready. */
export class Readiness {
  private ready = false;
  private why = 'starting';
  /** set marks the process ready or not, with a reason for the latter. */
  set(ready: boolean, why = ''): void {
    this.ready = ready;
    this.why = why;
  }
  /** isReady tells whether /readyz answers 200. */
  isReady(): boolean {
    return this.ready;
  }
  /** reason is why the process is not ready. */
  reason(): string {
    return this.why;
  }
}

/** createOpsServer builds (does not start) the operations server. */
export function createOpsServer(registry: Registry, readiness: Readiness): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const ok = readiness.isReady();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ok\n' : `not ready: ${readiness.reason()}\n`);
    } else if (path === '/metrics') {
      registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
        (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${err.message}\n`),
      );
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  });
}
