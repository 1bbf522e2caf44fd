import { describe, expect, it } from '@jest/globals';
import { longestGap, percentile, resultLine, summarize, type WriteRecord } from './results.js';

const w = (seq: number, sentAt: number, ackAt?: number, error?: string): WriteRecord => ({ seq, key: `/k/${seq}`, value: `v${seq}`, sentAt, ...(ackAt !== undefined ? { ackAt } : {}), ...(error ? { error } : {}) });

describe('percentile (nearest rank)', () => {
  it.each([
    [[], 99, NaN],
    [[5], 99, 5],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50, 5],
    [[10, 9, 8, 7, 6, 5, 4, 3, 2, 1], 90, 9],
    [Array.from({ length: 100 }, (_, i) => i + 1), 99, 99],
    [Array.from({ length: 1000 }, (_, i) => i + 1), 99, 990],
  ])('%j p%d = %d', (xs, p, want) => expect(percentile(xs, p)).toEqual(want));
});

describe('longestGap', () => {
  it.each([
    ['no acks: the whole run', [], 0, 10_000, 10_000],
    ['steady acks', [1000, 2000, 3000], 0, 4000, 1000],
    ['a hole in the middle', [1000, 2000, 7000, 8000], 0, 8500, 5000],
    ['nothing after the last ack counts too', [1000], 0, 9000, 8000],
    ['unsorted input', [3000, 1000, 2000], 0, 3000, 1000],
  ])('%s', (_why, acks, start, end, want) => expect(longestGap(acks, start, end)).toBe(want));
});

describe('summarize', () => {
  it('counts acked, failed and lost; a write neither acked nor failed (cut off by the end) is neither', () => {
    const records = [w(1, 0, 10), w(2, 100, 130), w(3, 200, undefined, 'timeout'), w(4, 300, 320), w(5, 400)];
    const stored = new Map([['/k/1', 'v1'], ['/k/2', 'other'], ['/k/3', 'v3']]);
    expect(summarize(records, stored, 0, 1000)).toEqual({ acked: 3, lost: 2, failed: 1, unavailableS: 0.68, p99Ms: 30 });
  });
  it('a run that never wrote: all unavailable, p99 NaN', () => {
    expect(summarize([w(1, 0, undefined, 'refused')], new Map(), 0, 5000)).toEqual({ acked: 0, lost: 0, failed: 1, unavailableS: 5, p99Ms: NaN });
  });
});

describe('resultLine', () => {
  it('is the documented shape', () => {
    expect(resultLine('upgrade', 'ours', { acked: 100, lost: 0, failed: 2, unavailableS: 1.234, p99Ms: 45.6 }, 3, 3))
      .toBe('RESULT scenario=upgrade system=ours acked=100 lost=0 failed=2 unavailable_s=1.2 p99_ms=46 members_on_new=3/3');
  });
  it('a scenario\'s own fields come last, in order', () => {
    expect(resultLine('damaged-release', 'ours-no-checkpoint', { acked: 9, lost: 0, failed: 0, unavailableS: 0.1, p99Ms: 7 }, 0, 3, ['healthy_at_end=2/3', 'healthy_after_s=41']))
      .toBe('RESULT scenario=damaged-release system=ours-no-checkpoint acked=9 lost=0 failed=0 unavailable_s=0.1 p99_ms=7 members_on_new=0/3 healthy_at_end=2/3 healthy_after_s=41');
  });
});
