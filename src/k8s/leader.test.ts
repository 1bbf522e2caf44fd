import type { CoordinationV1Api, V1Lease } from '@kubernetes/client-node';
import { fakeTimers } from '../../test/support/fake-timers.js';
import { quietLog } from '../../test/support/quiet-log.js';
import { FenceClosed } from './deadline.js';
import { LeaderElector, leaderTimingProblem, leaseAction, microTime } from './leader.js';

const lease = (holder: string | undefined, renewMs: number, durationS = 15): V1Lease => ({
  metadata: { name: 'l', resourceVersion: '1' },
  spec: { holderIdentity: holder, renewTime: new Date(renewMs), leaseDurationSeconds: durationS },
});

describe('leaseAction', () => {
  it.each([
    ['no lease', undefined, 0, 'create'],
    ['held by me', lease('me', 0), 0, 'renew'],
    ['held by another, seen changing recently', lease('other', 0), 9000, 'wait'],
    ['held by another, unchanged for longer than its duration', lease('other', 0), 10_000 - 15_001, 'takeover'],
    ['held by another, exactly at expiry', lease('other', 0), 10_000 - 15_000, 'wait'],
    ['released (no holder)', lease(undefined, 10_000), 10_000, 'takeover'],
  ] as [string, V1Lease | undefined, number, string][])('%s -> %s', (_n, l, observedAt, want) => {
    expect(leaseAction(l, 'me', 10_000, observedAt, 15_000)).toBe(want);
  });

  it('ignores the holder clock: a renewTime far in the past (skew) does not expire a Lease seen changing just now', () => {
    expect(leaseAction(lease('other', -3_600_000), 'me', 10_000, 9_999, 15_000)).toBe('wait');
    // ...and one far in the future does not hold it forever.
    expect(leaseAction(lease('other', 3_600_000), 'me', 30_000, 10_000, 15_000)).toBe('takeover');
  });

  it('honours the lease duration written in the Lease', () => {
    expect(leaseAction(lease('other', 0, 60), 'me', 59_000, 0, 15_000)).toBe('wait');
    expect(leaseAction(lease('other', 0, 60), 'me', 61_000, 0, 15_000)).toBe('takeover');
  });
});

describe('leaderTimingProblem', () => {
  it('requires renew period < renew deadline < lease duration', () => {
    expect(leaderTimingProblem(15_000, 10_000, 2000)).toBeUndefined();
    expect(leaderTimingProblem(15_000, 15_000, 2000)).toContain('lease duration');
    expect(leaderTimingProblem(15_000, 2000, 2000)).toContain('renew deadline');
    expect(leaderTimingProblem(15_000, 10_000, 0)).toContain('positive');
  });
});

describe('microTime', () => {
  it('writes microseconds, as the API server wants for Lease times', () => {
    expect(microTime(Date.parse('2026-11-22T14:20:07.845Z'))).toBe('2026-11-22T14:20:07.845000Z');
  });
});

/** fakeLeaseApi keeps one Lease with resourceVersion checks; `mode` makes calls fail or hang. */
function fakeLeaseApi() {
  let stored: V1Lease | undefined;
  let rv = 0;
  const state = { mode: 'ok' as 'ok' | 'fail' | 'hang', calls: 0 };
  const gate = async () => {
    state.calls++;
    if (state.mode === 'fail') throw Object.assign(new Error('connection refused'), { code: 503 });
    if (state.mode === 'hang') await new Promise(() => undefined);
  };
  const clone = () => structuredClone(stored) as V1Lease;
  const api = {
    readNamespacedLease: async () => {
      await gate();
      if (!stored) throw Object.assign(new Error('not found'), { code: 404 });
      return clone();
    },
    createNamespacedLease: async ({ body }: { body: V1Lease }) => {
      await gate();
      if (stored) throw Object.assign(new Error('exists'), { code: 409 });
      stored = { ...body, metadata: { ...body.metadata, resourceVersion: String(++rv) } };
      return clone();
    },
    patchNamespacedLease: async ({ body }: { body: { metadata?: { resourceVersion?: string }; spec: Record<string, unknown> } }) => {
      await gate();
      if (!stored) throw Object.assign(new Error('not found'), { code: 404 });
      if (body.metadata?.resourceVersion && body.metadata.resourceVersion !== stored.metadata?.resourceVersion) throw Object.assign(new Error('conflict'), { code: 409 });
      stored = { ...stored, metadata: { ...stored.metadata, resourceVersion: String(++rv) }, spec: { ...stored.spec, ...(body.spec as V1Lease['spec']) } };
      return clone();
    },
  };
  return {
    api: api as unknown as CoordinationV1Api,
    state,
    get: () => stored,
    /** another replica writes the Lease (bumping its resourceVersion) */
    otherRenews: (holder = 'other') => {
      stored = { metadata: { name: 'l', resourceVersion: String(++rv) }, spec: { holderIdentity: holder, leaseDurationSeconds: 15, renewTime: new Date(0) } };
    },
  };
}

describe('LeaderElector (fake API, fake clock)', () => {
  const setup = (identity = 'me') => {
    const t = fakeTimers(1_000_000);
    const f = fakeLeaseApi();
    const { log } = quietLog();
    const events: string[] = [];
    const e = new LeaderElector(
      { api: f.api, namespace: 'ns', name: 'l', identity, leaseDurationMs: 15_000, renewDeadlineMs: 10_000, renewPeriodMs: 2000, requestTimeoutMs: 5000, log, now: t.now, timers: t.timers },
      () => events.push('started'),
      () => events.push('stopped'),
    );
    return { t, f, e, events };
  };

  it('acquires a missing Lease, renews it, and opens the fence only while renewed', async () => {
    const { t, f, e, events } = setup();
    e.start();
    await t.advance(0);
    expect(events).toEqual(['started']);
    expect(f.get()?.spec?.holderIdentity).toBe('me');
    expect(e.fence()).toBe(10_000);
    await t.advance(2000);
    expect(e.fence()).toBe(10_000); // renewed at the tick
    await e.release();
  });

  it('renew failures past the renew deadline lose leadership and close the fence (before the lease can expire elsewhere)', async () => {
    const { t, f, e, events } = setup();
    e.start();
    await t.advance(0);
    const renewedAt = t.now();
    f.state.mode = 'fail';
    await t.advance(9000);
    expect(e.isLeader()).toBe(true);
    expect(e.fence()).toBe(1000);
    await t.advance(1000);
    expect(events).toEqual(['started', 'stopped']);
    expect(e.isLeader()).toBe(false);
    expect(() => e.fence()).toThrow(FenceClosed);
    // Another replica could take over only after seeing no change for 15 s: 5 s after we stopped.
    expect(t.now() - renewedAt).toBeLessThan(15_000);
  });

  it('a hung Lease call cannot keep it leading: the call is cut at the fence and leadership is lost on time', async () => {
    const { t, f, e, events } = setup();
    e.start();
    await t.advance(0);
    f.state.mode = 'hang';
    await t.advance(10_000);
    expect(events).toEqual(['started', 'stopped']);
    expect(() => e.fence()).toThrow(FenceClosed);
  });

  it('a candidate waits while the holder keeps renewing, and takes over once the Lease stops changing for its duration', async () => {
    const { t, f, e, events } = setup();
    f.otherRenews();
    e.start();
    for (let i = 0; i < 10; i++) {
      await t.advance(2000);
      f.otherRenews(); // the holder renews every 2 s
    }
    expect(events).toEqual([]);
    await t.advance(14_000); // the holder stopped renewing; we saw its last renew at the next tick
    expect(events).toEqual([]);
    await t.advance(4000);
    expect(events).toEqual(['started']);
    expect(f.get()?.spec?.holderIdentity).toBe('me');
    expect(f.get()?.spec?.leaseTransitions).toBe(1);
    await e.release();
  });

  it('a 409 on takeover (another candidate won the race) does not make it leader', async () => {
    const { t, f, e, events } = setup();
    f.otherRenews();
    const api = f.api as unknown as { patchNamespacedLease: (a: unknown) => Promise<V1Lease> };
    const real = api.patchNamespacedLease;
    api.patchNamespacedLease = async (a) => {
      f.otherRenews('rival'); // the rival writes between our read and our patch
      return real(a);
    };
    e.start();
    await t.advance(17_000);
    expect(events).toEqual([]);
    expect(e.isLeader()).toBe(false);
    expect(f.get()?.spec?.holderIdentity).toBe('rival');
  });

  it('release hands the Lease back and stops the loop', async () => {
    const { t, f, e } = setup();
    e.start();
    await t.advance(0);
    await e.release();
    expect(f.get()?.spec?.holderIdentity).toBeNull();
    const calls = f.state.calls;
    await t.advance(10_000);
    expect(f.state.calls).toBe(calls);
  });
});
