// Puts the admission app behind HTTPS with certificates that reload from disk, next to the plain-HTTP
// operations port. Returned handles let main.ts and tests start and stop everything.
import type { AddressInfo } from 'node:net';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { Server as HttpServer } from 'node:http';
import { createOpsServer, Readiness } from '../src/runtime/ops-server.js';
import { createRegistry, webhookMetrics } from '../src/runtime/metrics.js';
import type { Logger } from '../src/runtime/logger.js';
import { TlsReloader, type TlsPair } from '../src/runtime/tls-reloader.js';
import { createApp } from './app.js';

/** WebhookServerOptions are what `startWebhook` needs; ports may be 0 for a free port. */
export interface WebhookServerOptions {
  port: number;
  metricsPort: number;
  bindAddress: string;
  certFile: string;
  keyFile: string;
  controllerUsernames: readonly string[];
  allowedPrometheusUrls?: readonly string[];
  tlsPollIntervalMs: number;
  log: Logger;
}

/** WebhookServer is a running webhook. */
export interface WebhookServer {
  https: Server;
  ops: HttpServer;
  readiness: Readiness;
  reloader: TlsReloader;
  port: number;
  metricsPort: number;
  /** stop fails readiness, stops accepting, drains in-flight requests (closing idle keep-alives) and resolves. */
  stop: (graceMs?: number) => Promise<void>;
}

const TLS_MIN = 'TLSv1.2';

function listen(server: Server | HttpServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function close(server: Server | HttpServer, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    // Keep-alive connections with no request in flight would hold close() open until they time out.
    server.closeIdleConnections();
  });
}

/** HANDSHAKE_TIMEOUT_MS bounds the TLS handshake. */
export const HANDSHAKE_TIMEOUT_MS = 10_000;
/**
 * MAX_CONNECTIONS bounds open sockets. The API server keeps a small pool of keep-alive connections to
 * each webhook (a few per API server replica), so 256 is far above real use and far below what
 * exhausts file descriptors or memory (each TLS socket holds ~50 KB).
 */
export const MAX_CONNECTIONS = 256;

/**
 * limitConnections sets the HTTP limits. The API server's webhook client times out after
 * timeoutSeconds (≤ 5 s here): a slow or stalled client must not hold a socket for long. A socket with
 * no traffic at all (TLS done, no request ever sent) is closed after 70 s, just above the 65 s
 * keep-alive that the API server's pooled connections rely on between reviews.
 */
export function limitConnections(s: Server): void {
  s.headersTimeout = 10_000;
  s.requestTimeout = 30_000;
  s.keepAliveTimeout = 65_000;
  s.timeout = 70_000;
  s.maxConnections = MAX_CONNECTIONS;
}

/** startWebhook loads the certificate (failing if it is broken), starts both servers and the reloader. */
export async function startWebhook(o: WebhookServerOptions): Promise<WebhookServer> {
  const registry = createRegistry();
  const metrics = webhookMetrics(registry);
  const readiness = new Readiness();
  const app = createApp({ log: o.log, metrics, controllerUsernames: new Set(o.controllerUsernames), allowedPrometheusUrls: o.allowedPrometheusUrls ?? [] });

  let https: Server | undefined;
  const reloader = new TlsReloader({
    certFile: o.certFile,
    keyFile: o.keyFile,
    log: o.log,
    pollIntervalMs: o.tlsPollIntervalMs,
    apply: (pair: TlsPair) => https?.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: TLS_MIN }),
    report: (result, pair) => {
      metrics.tlsReloads.inc({ result });
      if (pair) metrics.certificateExpiry.set(pair.notAfter.getTime() / 1000);
    },
  });
  const initial = await reloader.load();
  // handshakeTimeout: a TCP connection that never completes TLS is dropped after 10 s (Node's default
  // is 120 s), so idle sockets cannot pile up before any HTTP limit applies.
  https = createHttpsServer({ cert: initial.cert, key: initial.key, minVersion: TLS_MIN, handshakeTimeout: HANDSHAKE_TIMEOUT_MS }, app);
  limitConnections(https);
  const ops = createOpsServer(registry, readiness);

  const port = await listen(https, o.port, o.bindAddress);
  const metricsPort = await listen(ops, o.metricsPort, o.bindAddress);
  reloader.start();
  readiness.set(true);
  o.log.info({ port, metricsPort, bindAddress: o.bindAddress, subject: initial.subject, notAfter: initial.notAfter.toISOString() }, 'webhook serving');

  const stop = async (graceMs = 8000): Promise<void> => {
    readiness.set(false, 'shutting down');
    reloader.stop();
    await close(https, graceMs);
    await close(ops, 1000);
  };
  return { https, ops, readiness, reloader, port, metricsPort, stop };
}
