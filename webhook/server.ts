// Puts the admission app behind HTTPS with certificates that reload from disk, next to the plain-HTTP
// operations port. Returned handles let main.ts and tests start and stop everything.
import type { AddressInfo } from 'node:net';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { Server as HttpServer } from 'node:http';
import { createOpsServer, Readiness } from '../src/runtime/ops-server.js';
import { serverLimits, type SocketLimits } from '../src/runtime/socket-table.js';
import { createRegistry, webhookMetrics } from '../src/runtime/metrics.js';
import type { Logger } from '../src/runtime/logger.js';
import { TlsReloader, type TlsPair } from '../src/runtime/tls-reloader.js';
import { createApp, MAX_BODY_BYTES, MAX_IN_FLIGHT_BYTES } from './app.js';
import { ConnectionGuard } from './connection-guard.js';
import type { ClusterPolicyCaches } from './policies.js';

/** WebhookServerOptions are what `startWebhook` needs; ports may be 0 for a free port. */
export interface WebhookServerOptions {
  port: number;
  metricsPort: number;
  bindAddress: string;
  certFile: string;
  keyFile: string;
  controllerUsernames: readonly string[];
  allowedPrometheusUrls?: readonly string[];
  /** The caches of ClusterRolloutGates and Namespaces (--cluster-policies); the webhook is ready once they have listed. */
  clusterPolicies?: ClusterPolicyCaches;
  tlsPollIntervalMs: number;
  /** Defaults to DEFAULT_LIMITS. */
  limits?: Partial<ConnectionLimits>;
  log: Logger;
}

/** WebhookServer is a running webhook. */
export interface WebhookServer {
  https: Server;
  ops: HttpServer;
  readiness: Readiness;
  reloader: TlsReloader;
  guard: ConnectionGuard;
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

/** ConnectionLimits are the settings that bound what one client can hold of the HTTPS port. */
export interface ConnectionLimits extends SocketLimits {
  /** A request body must have arrived this long (spread over its second half) after its head, plus 1 s per MiB it declares. */
  bodyTimeoutMs: number;
}

/**
 * DEFAULT_LIMITS. Sockets: the API server keeps a small pool of keep-alive connections to each webhook
 * (a few per API server replica), so 256 is far above real use and far below what exhausts file
 * descriptors or memory (each TLS socket holds ~50 KB). Times: the API server sends a review at once
 * on a connection it opened and gives up after the webhook's timeoutSeconds (5 s in the manifests and
 * the chart), so a head still incomplete after 5 s, a body still arriving 2 s after its head (beyond
 * 1 s per MiB), or a request incomplete after 10 s, is answered to nobody and only holds a socket.
 */
export const DEFAULT_LIMITS: ConnectionLimits = { maxConnections: 256, headerTimeoutMs: 5_000, requestTimeoutMs: 10_000, bodyTimeoutMs: 2_000 };

/**
 * limitConnections sets the HTTP timeouts that are not server options. A kept-alive socket with no
 * request is closed after 65 s (Node adds 1 s), just above the 65 s keep-alive that the API server's
 * pooled connections rely on between reviews; a socket with no traffic at all after 70 s.
 */
export function limitConnections(s: Server): void {
  s.keepAliveTimeout = 65_000;
  s.timeout = 70_000;
}

/** startWebhook loads the certificate (failing if it is broken), starts both servers and the reloader. */
export async function startWebhook(o: WebhookServerOptions): Promise<WebhookServer> {
  const limits = { ...DEFAULT_LIMITS, ...o.limits };
  const timeouts = serverLimits(limits);
  const registry = createRegistry();
  const metrics = webhookMetrics(registry);
  const readiness = new Readiness();
  const app = createApp({ log: o.log, metrics, controllerUsernames: new Set(o.controllerUsernames), allowedPrometheusUrls: o.allowedPrometheusUrls ?? [], ...(o.clusterPolicies ? { clusterPolicies: o.clusterPolicies } : {}) });

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
  const guard = new ConnectionGuard({ ...limits, bodyPoolBytes: MAX_IN_FLIGHT_BYTES, maxBodyBytes: MAX_BODY_BYTES }, o.log, registry);
  // handshakeTimeout: a TCP connection that never completes TLS is dropped after 10 s (Node's default
  // is 120 s). headersTimeout counts from the end of the handshake on a new socket (Node attaches its
  // HTTP parser then), so a socket that never sends a byte is closed by it too; on a kept-alive socket
  // it counts from the first byte of the next request, and keepAliveTimeout covers the silence between.
  https = createHttpsServer(
    {
      cert: initial.cert,
      key: initial.key,
      minVersion: TLS_MIN,
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
      ...timeouts,
    },
    guard.handler(app),
  );
  limitConnections(https);
  guard.attach(https);
  // The operations port takes the same head and request deadlines; its socket cap is its own (ops-server.ts).
  const ops = createOpsServer(registry, readiness, { headerTimeoutMs: limits.headerTimeoutMs, requestTimeoutMs: limits.requestTimeoutMs });

  const port = await listen(https, o.port, o.bindAddress);
  const metricsPort = await listen(ops, o.metricsPort, o.bindAddress);
  reloader.start();
  // With cluster policies, ready only once they are listed: until then every StatefulSet write would be
  // refused (decide.ts, fail closed), so the API server is better sent to a replica that can judge.
  if (o.clusterPolicies) {
    readiness.set(false, 'ClusterRolloutGates and Namespaces not listed yet');
    o.clusterPolicies.start(() => {
      readiness.set(true);
      o.log.info('ClusterRolloutGates and Namespaces listed; ready');
    });
  } else readiness.set(true);
  o.log.info({ port, metricsPort, bindAddress: o.bindAddress, subject: initial.subject, notAfter: initial.notAfter.toISOString() }, 'webhook serving');

  const stop = async (graceMs = 8000): Promise<void> => {
    readiness.set(false, 'shutting down');
    reloader.stop();
    await o.clusterPolicies?.stop();
    await close(https, graceMs);
    await close(ops, 1000);
  };
  return { https, ops, readiness, reloader, guard, port, metricsPort, stop };
}
