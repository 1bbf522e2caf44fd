#!/usr/bin/env node
// phased-rollout-webhook: config -> HTTPS server -> decide(). Nothing else lives here.
import { loadApiAccess } from '../src/k8s/api-access.js';
import { bootProcess } from '../src/runtime/process.js';
import { onShutdown } from '../src/runtime/shutdown.js';
import { webhookSchema } from './config.js';
import { clusterPolicyCaches } from './policies.js';
import { startWebhook } from './server.js';

const PROGRAM = 'phased-rollout-webhook';

async function main(): Promise<void> {
  const booted = bootProcess(PROGRAM, 'Mutating admission webhook that pins the partition of opted-in StatefulSets (phased-rollout).', webhookSchema);
  if (!booted) return;
  const { c, log } = booted;
  let server;
  try {
    let clusterPolicies;
    if (c['cluster-policies']) {
      clusterPolicies = clusterPolicyCaches(loadApiAccess(c.kubeconfig), log);
    }
    server = await startWebhook({
      port: c.port,
      metricsPort: c['metrics-port'],
      bindAddress: c['bind-address'],
      certFile: c['tls-cert-file'],
      keyFile: c['tls-key-file'],
      controllerUsernames: c['controller-username'],
      allowedPrometheusUrls: c['allowed-prometheus-urls'],
      ...(clusterPolicies ? { clusterPolicies } : {}),
      tlsPollIntervalMs: c['tls-poll-interval'],
      limits: { maxConnections: c['max-connections'], headerTimeoutMs: c['request-header-timeout'], requestTimeoutMs: c['request-timeout'], bodyTimeoutMs: c['request-body-timeout'] },
      log,
    });
  } catch (err) {
    log.fatal({ reason: (err as Error).message }, 'cannot start');
    process.exit(1);
  }
  const s = server;
  onShutdown(log, [{ name: 'drain HTTPS and operations servers', run: () => s.stop(c['shutdown-timeout'] - 500) }], c['shutdown-timeout']);
}

void main();
