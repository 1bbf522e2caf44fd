// The built controller process refuses settings that would make it unsafe: leader-election timings that would let two replicas act at once, and tenancy that a StatefulSet could step around.
import { shipped, start } from '../support/process.js';

describe('phased-rollout-controller start-up', () => {
  it.each([
    [['--leader-election-lease-duration', '10s', '--leader-election-renew-deadline', '10s'], 'the lease duration (10000 ms) must be longer than the renew deadline (10000 ms)'],
    [['--leader-election-renew-deadline', '2s', '--leader-election-renew-period', '2s'], 'the renew deadline (2000 ms) must be longer than the renew period (2000 ms)'],
  ])('exits 2 on unsafe timings %j', async (flags, reason) => {
    const c = start(shipped('controller'), ['--leader-elect', '--kubeconfig', '/nonexistent', ...flags]);
    const { code } = await c.exited;
    expect(code).toBe(2);
    expect(c.lines()).toEqual([expect.objectContaining({ level: 'fatal', msg: 'unsafe leader election timings', reason })]);
  });
});

describe('phased-rollout-controller start-up: tenancy', () => {
  it.each([
    [['--prometheus-tenant-label', 'namespace'], "--prometheus-tenant-label needs --allowed-prometheus-urls (the proxy's URL): otherwise a StatefulSet can send its queries to a Prometheus without the proxy"],
    [['--prometheus-tenant-label', 'namespace', '--allowed-prometheus-urls', 'http://proxy:8080'], "--prometheus-tenant-label needs --allowed-gate-urls: otherwise an HTTP gate or hook can call a Prometheus without the proxy and read its answer"],
    [['--prometheus-tenant-label', 'query', '--allowed-prometheus-urls', 'http://proxy:8080', '--allowed-gate-urls', 'http://consul:8500/v1/'], '--prometheus-tenant-label must be a Prometheus label name other than query, time, timeout and limit'],
    [['--prometheus-tenant-label', 'name-space', '--allowed-prometheus-urls', 'http://proxy:8080', '--allowed-gate-urls', 'http://consul:8500/v1/'], '--prometheus-tenant-label must be a Prometheus label name other than query, time, timeout and limit'],
  ])('exits 2 on %j, saying why', async (flags, msg) => {
    const c = start(shipped('controller'), ['--kubeconfig', '/nonexistent', ...flags]);
    const { code } = await c.exited;
    expect(code).toBe(2);
    expect(c.lines()).toEqual([expect.objectContaining({ level: 'fatal', msg })]);
  });
});
