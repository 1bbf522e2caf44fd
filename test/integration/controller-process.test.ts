// The built controller process refuses leader-election timings that would let two replicas act at once.
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
