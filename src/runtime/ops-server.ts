// The plain-HTTP operations port of both processes: /metrics, /healthz (the process is alive) and
// /readyz (it should get traffic: false before start-up completes and from the start of shutdown).
// It has the HTTPS port's socket table and deadlines: it is as reachable in the cluster as port 9443.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Counter, type Registry } from 'prom-client';
import { serverLimits, SocketTable, type SocketLimits } from './socket-table.js';

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

/** OpsLimits bound what one client can hold of the operations port. */
export interface OpsLimits extends SocketLimits {
  /** Longest request head; a longer one gets 431 and the connection closes. */
  maxHeaderBytes: number;
}

/**
 * OPS_LIMITS. Issue 46 §3.5: with Node's defaults (no socket cap, 60 s for a head, checked every 30 s,
 * heads up to 16 KiB) 3,000 partial heads of 15 KB stayed open 60-90 s at about 20 KiB each. Its
 * callers are the kubelet's probes (a new connection each, a head of ~150 bytes) and Prometheus (a
 * kept-alive connection, a head of a few hundred bytes, a few KB with a bearer token), so 64 sockets
 * and 8 KiB heads are far above real use and bound what a flood holds to 64 heads; the deadlines are
 * the HTTPS port's defaults.
 */
export const OPS_LIMITS: OpsLimits = { maxConnections: 64, headerTimeoutMs: 5_000, requestTimeoutMs: 10_000, maxHeaderBytes: 8 * 1024 };

/**
 * createOpsServer builds (does not start) the operations server, with `limits` over OPS_LIMITS; it
 * registers phased_rollout_ops_shed_total in `registry`.
 */
export function createOpsServer(registry: Registry, readiness: Readiness, limits: Partial<OpsLimits> = {}): Server {
  const l = { ...OPS_LIMITS, ...limits };
  const shed = new Counter({
    name: 'phased_rollout_ops_shed_total',
    help: 'Sockets the operations port closed or refused to keep room for probes and scrapes, by reason (silent-socket-closed, idle-socket-evicted, socket-refused).',
    labelNames: ['reason'],
    registers: [registry],
  });
  const table = new SocketTable(l, (reason) => shed.inc({ reason }));
  const server = createServer({ ...serverLimits(l), maxHeaderSize: l.maxHeaderBytes }, table.handler((req, res) => answer(req, res, registry, readiness)));
  table.attach(server);
  return server;
}

/** answer serves one request of the operations port. */
function answer(req: IncomingMessage, res: ServerResponse, registry: Registry, readiness: Readiness): void {
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
}
