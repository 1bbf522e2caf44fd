#!/usr/bin/env node
// phased-rollout-webhook: config -> HTTPS server -> decide(). Nothing else lives here.
import { ConfigError, helpText, loadConfig } from '../src/runtime/config.js';
import { createLogger } from '../src/runtime/logger.js';
import { onShutdown } from '../src/runtime/shutdown.js';
import { webhookSchema } from './config.js';
import { startWebhook } from './server.js';

const PROGRAM = 'phased-rollout-webhook';

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = loadConfig(webhookSchema, process.argv.slice(2), process.env);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`${PROGRAM}: invalid configuration:\n  ${e.problems.join('\n  ')}\n`);
    process.exit(2);
  }
  if (parsed.help) {
    process.stdout.write(helpText(PROGRAM, 'Mutating admission webhook that pins the partition of opted-in StatefulSets (phased-rollout).', webhookSchema));
    return;
  }
  const c = parsed.values;
  const log = createLogger(PROGRAM, c['log-level']);
  process.on('uncaughtException', (err) => {
    log.fatal({ err }, 'uncaught exception');
    process.exit(1);
  });
  let server;
  try {
    server = await startWebhook({
      port: c.port,
      metricsPort: c['metrics-port'],
      bindAddress: c['bind-address'],
      certFile: c['tls-cert-file'],
      keyFile: c['tls-key-file'],
      controllerUsernames: c['controller-username'],
      tlsPollIntervalMs: c['tls-poll-interval'],
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
