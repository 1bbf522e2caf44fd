import type { WriteRecord } from '../etcd/results.js';
import { chooseCut, cutMsOf, healthyAtEnd, lossAround } from './checkpoint-loss.js';

const w = (seq: number, sentAt: number, ackAt?: number): WriteRecord => ({ seq, key: String(seq), value: `v${seq}`, sentAt, ...(ackAt !== undefined ? { ackAt } : { error: 'relation "scenario_writes" does not exist' }) });
const stored = (...seqs: number[]) => new Map(seqs.map((s) => [String(s), `v${s}`]));

describe('cutMsOf', () => {
  it.each([
    [{ status: { creationTime: 1_760_000_000_123_456_789 } }, 1_760_000_000_123],
    [{ status: { creationTime: '1760000000123456789' } }, 1_760_000_000_123],
    [{ status: {} }, undefined],
    [{}, undefined],
    [undefined, undefined],
  ])('%j -> %s (the content counts nanoseconds)', (content, want) => expect(cutMsOf(content)).toBe(want));
});

describe('chooseCut', () => {
  const snaps = [{ name: 'data-postgres-0-cp-a', cutMs: 1000 }, { name: 'data-postgres-0-cp-b', cutMs: 3000 }, { name: 'data-postgres-0-cp-c' }];
  it.each([
    ['the one the claim was restored from', snaps, 'data-postgres-0-cp-a', 5000, { atMs: 1000, what: 'checkpoint' }],
    ['no restore: the newest cut', snaps, undefined, 5000, { atMs: 3000, what: 'checkpoint' }],
    ['restored from one not cut (not seen): the newest cut', snaps, 'data-postgres-0-cp-c', 5000, { atMs: 3000, what: 'checkpoint' }],
    ['no checkpoint: when the pod went', [], undefined, 5000, { atMs: 5000, what: 'pod-deleted' }],
    ['none cut, the pod never went', [{ name: 'x' }], undefined, undefined, { atMs: Infinity, what: 'none' }],
  ] as const)('%s', (_, s, from, gone, want) => expect(chooseCut(s, from, gone)).toEqual(want));
});

describe('lossAround', () => {
  const records = [w(1, 0, 100), w(2, 900, 999), w(3, 950, 1000), w(4, 1100, 1200), w(5, 1300)];
  it.each([
    ['the table restored from the cut: those acknowledged after it are gone', stored(1, 2), { beforeCut: 0, afterCut: 2 }],
    ['a write acknowledged before the cut missing is counted before', stored(1, 3), { beforeCut: 1, afterCut: 1 }],
    ['everything there (a write never acknowledged is no loss)', stored(1, 2, 3, 4), { beforeCut: 0, afterCut: 0 }],
    ['a row with another value is lost', new Map([['1', 'v1'], ['2', 'other'], ['3', 'v3'], ['4', 'v4']]), { beforeCut: 1, afterCut: 0 }],
    ['the table gone: every acknowledged write', null, { beforeCut: 2, afterCut: 2 }],
  ])('%s', (_, s, want) => expect(lossAround(records, s, 1000)).toEqual(want));
});

describe('healthyAtEnd', () => {
  const end = { ready: true, tableBack: true, stopMs: 10_000, windowMs: 5000 };
  const ok = [w(1, 4000), w(2, 5000, 5010), w(3, 9990, 10_020)];
  it.each([
    ['every write of the window acknowledged (one before it failed)', ok, end, true],
    ['one of the window failed', [...ok, w(4, 6000)], end, false],
    ['no write in the window', [w(1, 1000, 1010)], end, false],
    ['not ready', ok, { ...end, ready: false }, false],
    ['the table gone', ok, { ...end, tableBack: false }, false],
  ] as const)('%s', (_, records, e, want) => expect(healthyAtEnd(records, e)).toBe(want));
});
