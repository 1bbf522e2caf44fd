import { KEYS } from '../annotations.js';
import { groupHold, groupOf, groupWait, memberOf } from './groups.js';
import type { GroupMember, PodView, StatefulSetView } from './types.js';

const view = (o: Partial<StatefulSetView> = {}): StatefulSetView => ({
  namespace: 'ns', name: 'a', generation: 1, observedGeneration: 1, replicas: 3, ordinalsStart: 0, partition: 3, strategyType: 'RollingUpdate', minReadySeconds: 0, updateRevision: 'r1', currentRevision: 'r1', annotations: {}, ...o,
});
/** podsOf makes ready pods a-0.. on the given revisions (ready since t=0). */
const podsOf = (name: string, revisions: string[], o: (i: number) => Partial<PodView> = () => ({})): PodView[] =>
  revisions.map((revision, index) => ({ name: `${name}-${index}`, uid: `u${index}`, index, revision, ready: true, readySinceMs: 0, deleting: false, ...o(index) }));
const NOW = 100_000;
const status = (phase: string, revision: string) => ({ [KEYS.status]: JSON.stringify({ phase, revision, partition: 3, replicas: 3, updated: 0, message: '', since: '' }) });

describe('memberOf', () => {
  it.each([
    ['idle and pinned', view(), 0, { pending: false, started: false, failed: false }],
    ['a new revision not yet rolling', view({ updateRevision: 'r2' }), 0, { pending: true, started: false, failed: false }],
    ['rolling: partition lowered', view({ updateRevision: 'r2', partition: 2 }), 0, { pending: true, started: true }],
    ['rolling: a pod updated, partition raised again by a scale', view({ updateRevision: 'r2' }), 1, { pending: true, started: true }],
    ['final verification: all pods updated, partition 0', view({ partition: 0 }), 3, { pending: true, started: true }],
    ['the spec not yet observed', view({ generation: 2 }), 0, { pending: true, started: false }],
    ['no revision reported yet', view({ updateRevision: undefined }), 0, { pending: true }],
    ['Failed for its revision', view({ updateRevision: 'r2', partition: 2, annotations: status('Failed', 'r2') }), 1, { failed: true }],
    ['Failed for an older revision', view({ updateRevision: 'r3', annotations: status('Failed', 'r2') }), 0, { failed: false }],
    ['RolledBack', view({ annotations: status('RolledBack', 'r1') }), 0, { pending: false, failed: true }],
    ['Completed', view({ annotations: status('Completed', 'r1') }), 3, { pending: false, started: false, failed: false }],
    // A scale-up made a pod on r2 before the partition was raised: its status says it was waiting to start.
    ['queued, scaled up: a pod on the new revision does not start it', view({ updateRevision: 'r2', annotations: { [KEYS.status]: JSON.stringify({ phase: 'Queued', revision: 'r2', waitingToStart: true }) } }), 1, { pending: true, started: false }],
    ['queued for an older revision: the pod counts', view({ updateRevision: 'r3', annotations: { [KEYS.status]: JSON.stringify({ phase: 'Queued', revision: 'r2', waitingToStart: true }) } }), 1, { pending: true, started: true }],
  ])('%s', (_n, v, updated, want) => expect(memberOf(v, 0, updated, podsOf('a', ['r1', 'r1', 'r1']), NOW)).toMatchObject(want));
});

describe('memberOf: which pod is down (zone safety)', () => {
  it.each([
    ['every pod up', view(), podsOf('a', ['r1', 'r1', 'r1']), undefined],
    ['a pod missing', view(), podsOf('a', ['r1', 'r1']), 'a-2 does not exist'],
    ['a pod not ready', view(), podsOf('a', ['r1', 'r1', 'r1'], (i) => ({ ready: i !== 1 })), 'a-1 is not ready'],
    ['a pod terminating', view(), podsOf('a', ['r1', 'r1', 'r1'], (i) => ({ deleting: i === 0 })), 'a-0 is terminating'],
    ['a pod ready but not available yet', view({ minReadySeconds: 30 }), podsOf('a', ['r1', 'r1', 'r1'], (i) => ({ readySinceMs: i === 2 ? NOW - 10_000 : 0 })), 'a-2 is not available yet (minReadySeconds 30)'],
    ['available after minReadySeconds', view({ minReadySeconds: 30 }), podsOf('a', ['r1', 'r1', 'r1'], () => ({ readySinceMs: NOW - 30_000 })), undefined],
    ['Ready without lastTransitionTime: just ready, not since 1970', view({ minReadySeconds: 30 }), podsOf('a', ['r1', 'r1', 'r1'], (i) => (i === 1 ? { readySinceMs: undefined } : {})), 'a-1 is not available yet (minReadySeconds 30)'],
    ['Ready without lastTransitionTime and no minReadySeconds: available', view(), podsOf('a', ['r1', 'r1', 'r1'], (i) => (i === 1 ? { readySinceMs: undefined } : {})), undefined],
    ['mid-step: partition lowered, the pod not replaced yet', view({ updateRevision: 'r2', partition: 2 }), podsOf('a', ['r1', 'r1', 'r1']), 'a-2 is about to be replaced (member a is mid-step)'],
    ['between steps: pods above the partition updated', view({ updateRevision: 'r2', partition: 2 }), podsOf('a', ['r1', 'r1', 'r2']), undefined],
    ['pending but not started: pods on the old revision are fine', view({ updateRevision: 'r2' }), podsOf('a', ['r1', 'r1', 'r1']), undefined],
    ['ordinals.start names the pods', view({ ordinalsStart: 5 }), podsOf('a', ['r1', 'r1']), 'a-7 does not exist'],
  ])('%s', (_n, v, pods, want) => expect(memberOf(v, 0, 0, pods, NOW).down).toBe(want));
});

describe('groupHold', () => {
  const m = (name: string, down?: string): GroupMember => ({ name, order: 0, pending: false, started: false, failed: false, ...(down ? { down } : {}) });
  it.each([
    ['no other member', [], undefined],
    ['every other pod up', [m('b'), m('c')], undefined],
    ['a pod of another member down', [m('b'), m('c', 'c-2 is not ready')], 'group zones: c-2 is not ready'],
  ])('%s', (_n, others, want) => expect(groupHold('zones', others)).toBe(want));
});

describe('groupWait', () => {
  const m = (name: string, order: number, o: Partial<GroupMember> = {}): GroupMember => ({ name, order, pending: false, started: false, failed: false, ...o });
  const self = (name: string, order: number, started = false) => ({ name, order, started });
  it.each([
    ['alone', self('b', 1), [], undefined],
    ['earlier members finished', self('b', 1), [m('a', 0), m('c', 2, { pending: true })], undefined],
    ['an earlier member pending', self('b', 1), [m('a', 0, { pending: true })], 'waiting for member a (order 0) to roll first'],
    ['same order: by name', self('b', 0), [m('a', 0, { pending: true })], 'waiting for member a'],
    ['same order, later name: goes first', self('a', 0), [m('b', 0, { pending: true })], undefined],
    ['a later member already rolling', self('a', 0), [m('c', 2, { pending: true, started: true })], 'waiting for member c (order 2) to complete its rollout'],
    ['started: never waits for an earlier pending member', self('c', 2, true), [m('a', 0, { pending: true })], undefined],
    ['a failed member halts everyone, started too', self('c', 2, true), [m('a', 0, { failed: true })], 'group g halted: member a failed its rollout'],
    ['a failed later member halts an earlier one', self('a', 0), [m('c', 2, { failed: true, pending: true, started: true })], 'halted: member c'],
  ])('%s', (_n, s, others, want) => {
    const w = groupWait('g', s, others as GroupMember[]);
    if (want === undefined) expect(w).toBeUndefined();
    else expect(w).toContain(want);
  });

  it('two members can never wait for each other', () => {
    // Every combination of two members' pending/started: at least one of them may move, unless one failed.
    const flags = [false, true];
    for (const ap of flags) for (const as of flags) for (const bp of flags) for (const bs of flags) {
      const a = m('a', 0, { pending: ap || as, started: as });
      const b = m('b', 1, { pending: bp || bs, started: bs });
      if (!a.pending || !b.pending) continue;
      const aWaits = groupWait('g', a, [b]) !== undefined;
      const bWaits = groupWait('g', b, [a]) !== undefined;
      expect(aWaits && bWaits).toBe(false);
    }
  });
});

describe('groupOf', () => {
  it('reads the group and order of a valid opted-in StatefulSet only', () => {
    const on = { [KEYS.enabled]: 'true', [KEYS.query]: 'up' };
    expect(groupOf({ ...on, [KEYS.group]: 'zones', [KEYS.groupOrder]: '2' })).toEqual({ group: 'zones', order: 2 });
    expect(groupOf({ ...on, [KEYS.group]: 'zones' })).toEqual({ group: 'zones', order: 0 });
    expect(groupOf(on)).toBeUndefined();
    expect(groupOf({ [KEYS.group]: 'zones' })).toBeUndefined();
    expect(groupOf({ ...on, [KEYS.group]: 'zones', [KEYS.periodSeconds]: 'x' })).toBeUndefined();
  });
});
