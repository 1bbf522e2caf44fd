import { KEYS } from '../annotations.js';
import { parseStatusKeys, sealStatus, statusTrust, trustedAnnotations, type StatusKeys } from './status-seal.js';
import { readStatus } from './status.js';
import type { RolloutStatus } from './types.js';

const k1 = Buffer.alloc(32, 1);
const k2 = Buffer.alloc(32, 2);
const keys: StatusKeys = { sign: k1, verify: [k1] };
const status: RolloutStatus = { phase: 'RollingBack', revision: 'web-b', partition: 0, replicas: 3, updated: 1, message: 'rolling back', since: '2026-01-01T00:00:00.000Z', failedRevision: 'web-b', previousRevision: 'web-a' };
const ann = (v: string) => ({ [KEYS.enabled]: 'true', [KEYS.status]: v });

describe('the sealed status', () => {
  it('verifies for the StatefulSet it was written for, and reads as the same status', () => {
    const v = sealStatus(status, 'uid-1', keys);
    expect(statusTrust(ann(v), 'uid-1', keys)).toBe('sealed');
    expect(readStatus(ann(v))).toMatchObject(status);
  });

  it.each<[string, (v: string) => string, string]>([
    ['a hand-written status (no seal)', () => JSON.stringify(status), 'unsealed'],
    ['a field changed after sealing', (v) => v.replace('"partition":0', '"partition":1'), 'forged'],
    ['a seal of another key', () => sealStatus(status, 'uid-1', { sign: k2, verify: [k2] }), 'forged'],
    ['a status copied from the object it was sealed for onto one made anew (another UID)', () => sealStatus(status, 'uid-0', keys), 'forged'],
    ['a seal that is no string', (v) => v.replace(/"seal":"[^"]*"/, '"seal":1'), 'forged'],
    ['not JSON', () => '{', 'forged'],
  ])('%s is not trusted', (_, make, want) => {
    const v = make(sealStatus(status, 'uid-1', keys));
    expect(statusTrust(ann(v), 'uid-1', keys)).toBe(want);
    const t = trustedAnnotations(ann(v), 'uid-1', keys);
    expect(t.trust).toBe(want);
    expect(t.annotations[KEYS.status]).toBeUndefined();
    expect(t.annotations[KEYS.enabled]).toBe('true');
  });

  it('a rotation: a status sealed with the previous key verifies while it is listed; new ones use the new key', () => {
    const old = sealStatus(status, 'uid-1', { sign: k1, verify: [k1] });
    const rotated = parseStatusKeys({ key: k2, previous: k1 });
    expect(statusTrust(ann(old), 'uid-1', rotated)).toBe('sealed');
    expect(statusTrust(ann(sealStatus(status, 'uid-1', rotated)), 'uid-1', { sign: k2, verify: [k2] })).toBe('sealed');
    expect(statusTrust(ann(old), 'uid-1', parseStatusKeys({ key: k2 }))).toBe('forged');
  });

  it('a new seal replaces the old one, and without keys nothing is sealed or dropped', () => {
    const twice = sealStatus({ ...status, seal: 'stale' }, 'uid-1', keys);
    expect(twice.match(/"seal"/g)).toHaveLength(1);
    expect(sealStatus(status, 'uid-1', undefined)).toBe(JSON.stringify(status));
    expect(trustedAnnotations(ann('{}'), 'uid-1', undefined).annotations[KEYS.status]).toBe('{}');
    expect(trustedAnnotations({}, 'uid-1', keys).trust).toBe('absent');
  });

  it('keys shorter than 32 bytes are refused', () => {
    expect(() => parseStatusKeys({})).toThrow('"key" of at least 32 bytes');
    expect(() => parseStatusKeys({ key: Buffer.alloc(8) })).toThrow('at least 32 bytes');
    expect(() => parseStatusKeys({ key: k1, previous: Buffer.alloc(3) })).toThrow('"previous"');
  });
});
