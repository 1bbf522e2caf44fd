import type { V1Lease } from '@kubernetes/client-node';
import { leaseAction, microTime } from './leader.js';

const lease = (holder: string | undefined, renewMs: number, durationS = 15): V1Lease => ({
  metadata: { name: 'l', resourceVersion: '1' },
  spec: { holderIdentity: holder, renewTime: new Date(renewMs), leaseDurationSeconds: durationS },
});

describe('leaseAction', () => {
  it.each([
    ['no lease', undefined, 'create'],
    ['held by me', lease('me', 0), 'renew'],
    ['held by another, fresh', lease('other', 10_000), 'wait'],
    ['held by another, expired', lease('other', 10_000 - 15_001), 'takeover'],
    ['held by another, exactly at expiry', lease('other', 10_000 - 15_000), 'wait'],
    ['released (no holder)', lease(undefined, 10_000), 'takeover'],
  ] as [string, V1Lease | undefined, string][])('%s -> %s', (_n, l, want) => {
    expect(leaseAction(l, 'me', 10_000, 15_000)).toBe(want);
  });

  it('reads renewTime given as a string and honours the lease duration written in the Lease', () => {
    const l = { spec: { holderIdentity: 'other', renewTime: new Date(0).toISOString() as unknown as Date, leaseDurationSeconds: 60 } };
    expect(leaseAction(l, 'me', 59_000, 15_000)).toBe('wait');
    expect(leaseAction(l, 'me', 61_000, 15_000)).toBe('takeover');
  });
});

describe('microTime', () => {
  it('writes microseconds, as the API server wants for Lease times', () => {
    expect(microTime(Date.parse('2026-11-22T14:20:07.845Z'))).toBe('2026-11-22T14:20:07.845000Z');
  });
});
