import { bodyOf, notificationsOf } from './notify.js';
import type { Action, RolloutStatus } from './types.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const target = { namespace: 'prod', name: 'db' };
const status: RolloutStatus = { phase: 'WaitingForPods', revision: 'db-2', partition: 2, replicas: 3, updated: 0, message: 'partition lowered to 2', since: '' };
const ev = (reason: string, message = reason): Action => ({ type: 'event', eventType: 'Normal', reason, message });

describe('notificationsOf', () => {
  it.each([
    ['RolloutStarted', 'started'],
    ['PartitionLowered', 'step'],
    ['RolloutPaused', 'paused'],
    ['RolloutCompleted', 'completed'],
    ['RolloutFailed', 'failed'],
    ['RollbackStarted', 'failed'],
    ['RolledBack', 'rolledBack'],
  ])('%s is told as %s', (reason, kind) => {
    expect(notificationsOf(target, [ev(reason)], T0).map((n) => n.kind)).toEqual([kind]);
  });

  it.each(['CheckFailed', 'PrometheusError', 'PartitionRaised', 'InvalidConfiguration', 'RolloutQueued', 'RolloutResumed', 'StrandedPodDeleted'])('%s is not told', (reason) => {
    expect(notificationsOf(target, [ev(reason)], T0)).toEqual([]);
  });

  it('keeps the order of the Events and carries the new status', () => {
    const actions: Action[] = [{ type: 'setPartition', from: 3, to: 2 }, ev('RolloutStarted', 'rolling'), ev('PartitionLowered', 'partition 3 -> 2'), { type: 'writeStatus', status: { ...status, failedRevision: 'db-1', failureReason: 'Aborted' } }];
    expect(notificationsOf(target, actions, T0)).toEqual([
      { kind: 'started', namespace: 'prod', statefulset: 'db', reason: 'RolloutStarted', message: 'rolling', phase: 'WaitingForPods', revision: 'db-2', partition: 2, replicas: 3, updated: 0, failedRevision: 'db-1', failureReason: 'Aborted', time: '2026-01-01T00:00:00.000Z' },
      expect.objectContaining({ kind: 'step', message: 'partition 3 -> 2' }),
    ]);
  });
});

describe('bodyOf', () => {
  const n = notificationsOf(target, [ev('RolloutFailed', 'gate failed <3> times & gave up'), { type: 'writeStatus', status }], T0)[0]!;
  it('json is the notification itself', () => expect(bodyOf(n, 'json')).toBe(n));
  it('slack is one plain text line with its control characters escaped', () => {
    expect(bodyOf(n, 'slack')).toEqual({ text: 'phased-rollout: prod/db: rollout failed: gate failed &lt;3&gt; times &amp; gave up (revision db-2, 0/3 pods updated)' });
  });
});
