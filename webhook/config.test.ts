import { loadConfig } from '../src/runtime/config.js';
import { webhookSchema } from './config.js';
import { DEFAULT_LIMITS } from './server.js';

const REQUIRED = ['--tls-cert-file', 'tls.crt', '--tls-key-file', 'tls.key'];

function values(argv: string[], env: Record<string, string> = {}) {
  const parsed = loadConfig(webhookSchema, [...REQUIRED, ...argv], env);
  if (parsed.help) throw new Error('unexpected --help');
  return parsed.values;
}

describe('webhook request-limit flags', () => {
  it('default to the limits startWebhook applies without them', () => {
    const c = values([]);
    expect({ maxConnections: c['max-connections'], headerTimeoutMs: c['request-header-timeout'], requestTimeoutMs: c['request-timeout'], bodyTimeoutMs: c['request-body-timeout'] }).toEqual(DEFAULT_LIMITS);
  });

  it('take flags and env twins, flags winning', () => {
    const c = values(['--request-timeout', '20s'], { PHASED_ROLLOUT_MAX_CONNECTIONS: '1024', PHASED_ROLLOUT_REQUEST_HEADER_TIMEOUT: '2s', PHASED_ROLLOUT_REQUEST_TIMEOUT: '8s', PHASED_ROLLOUT_REQUEST_BODY_TIMEOUT: '500ms' });
    expect([c['max-connections'], c['request-header-timeout'], c['request-timeout'], c['request-body-timeout']]).toEqual([1024, 2000, 20_000, 500]);
  });

  it('refuse a cap of 0 and a timeout of 0', () => {
    expect(() => values(['--max-connections', '0', '--request-timeout', '0s'])).toThrow(/--max-connections: "0" must be a positive integer[\s\S]*--request-timeout: "0s" must be a positive duration/);
  });
});
