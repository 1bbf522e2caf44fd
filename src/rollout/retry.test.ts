import { retried, retryToken } from './retry.js';
import type { RolloutStatus } from './types.js';

const SINCE = '2026-01-01T00:00:10.000Z';
const AT = Date.parse(SINCE);
const failed: RolloutStatus = { phase: 'Failed', revision: 'new', partition: 2, replicas: 3, updated: 1, message: 'gate failed 3 times in a row at partition 2', since: SINCE, gate: 'failing', previousRevision: 'old' };

describe('retryToken', () => {
  it.each<[string, RolloutStatus | undefined, string | undefined]>([
    ['a Failed status: its revision and when it failed', failed, `new@${AT}`],
    ['no status', undefined, undefined],
    ['an inconclusive hold', { ...failed, phase: 'Paused', reason: 'Inconclusive', hold: AT }, `new@${AT}`],
    ['a user\'s pause', { ...failed, phase: 'Paused' }, undefined],
    ['a rollback', { ...failed, phase: 'RollingBack' }, undefined],
    ['a time no Date reads', { ...failed, since: 'yesterday' }, undefined],
  ])('%s', (_, prev, want) => expect(retryToken(prev)).toBe(want));
});

describe('retried', () => {
  it('keeps where the rollout started and its replicas; forgets the failure and a held revision', () => {
    const held: RolloutStatus = { ...failed, failedRevision: 'new', failureReason: 'FailureThreshold', unverifiedRevision: 'x' };
    expect(retried(held, { revision: 'new', failedAt: AT })).toEqual({
      phase: 'WaitingForPods',
      revision: 'new',
      partition: 2,
      replicas: 3,
      updated: 1,
      since: SINCE,
      previousRevision: 'old',
      unverifiedRevision: 'x',
      message: 'retried by a user after: gate failed 3 times in a row at partition 2',
    });
  });

  it('keeps a revision rolled back earlier, other than the one retried: it stays held', () => {
    const r = retried({ ...failed, failedRevision: 'older', failureReason: 'Aborted' }, { revision: 'new', failedAt: AT });
    expect(r).toMatchObject({ failedRevision: 'older', failureReason: 'Aborted' });
  });

  it('an inconclusive hold: the hold and its promotion are forgotten', () => {
    const held: RolloutStatus = { ...failed, phase: 'Paused', reason: 'Inconclusive', hold: AT, holdPods: 'abcd0123', promoted: 'new@2@1', promotionRefused: 'new@2@0', gate: 'inconclusive' };
    const r = retried(held, { revision: 'new', failedAt: AT });
    expect(r).toMatchObject({ phase: 'WaitingForPods', previousRevision: 'old', replicas: 3 });
    for (const k of ['reason', 'hold', 'holdPods', 'promoted', 'promotionRefused', 'gate'] as const) expect(r?.[k]).toBeUndefined();
  });

  it.each<[string, RolloutStatus | undefined, { revision: string; failedAt: number } | undefined]>([
    ['no retry written', failed, undefined],
    ['a retry of an earlier failure of the same revision', failed, { revision: 'new', failedAt: AT - 1 }],
    ['a retry of another revision', failed, { revision: 'other', failedAt: AT }],
    ['the status moved on (the retry was used, or it is rolling back)', { ...failed, phase: 'Checking' }, { revision: 'new', failedAt: AT }],
    ['no status', undefined, { revision: 'new', failedAt: AT }],
  ])('does nothing for %s', (_, prev, retry) => expect(retried(prev, retry)).toBeUndefined());
});
