import { parseAnnotations, KEYS } from '../annotations.js';
import { heldInconclusive, holdIdentity, judgePromotion, podsIdentity } from './holds.js';

const PODS = podsIdentity(['a', 'b', 'c']);
import type { RolloutStatus, StatefulSetView } from './types.js';

const HOLD = 1_767_225_600_000;
const held: RolloutStatus = { phase: 'Paused', reason: 'Inconclusive', revision: 'new', partition: 2, replicas: 3, updated: 1, message: 'paused', since: '2026-01-01T00:00:00.000Z', hold: HOLD };
const sts = (o: Partial<StatefulSetView> = {}, promote?: string): StatefulSetView => ({
  namespace: 'ns', name: 'db', generation: 1, observedGeneration: 1, replicas: 3, ordinalsStart: 0, partition: 2, strategyType: 'RollingUpdate', minReadySeconds: 0, updateRevision: 'new', currentRevision: 'old',
  annotations: { [KEYS.enabled]: 'true', [KEYS.query]: 'up', ...(promote ? { [KEYS.promote]: promote } : {}) },
  ...o,
});
const cfgOf = (s: StatefulSetView) => {
  const parsed = parseAnnotations(s.annotations);
  if (!parsed.ok || !parsed.config) throw new Error('test annotations invalid');
  return parsed.config;
};

describe('heldInconclusive', () => {
  it.each<[string, RolloutStatus | undefined, Partial<StatefulSetView>, boolean]>([
    ['the hold as written', held, {}, true],
    ['no status', undefined, {}, false],
    ['a user pause', { ...held, reason: undefined }, {}, false],
    ['another revision', held, { updateRevision: 'newer' }, false],
    ['another partition', held, { partition: 1 }, false],
    ['scaled down: the pods it judged are gone', held, { replicas: 2 }, false],
    ['scaled up', held, { replicas: 4 }, false],
  ])('%s', (_, prev, o, want) => expect(heldInconclusive(prev, sts(o).updateRevision!, sts(o), PODS)).toBe(want));

  it('a pod the hold judged replaced ends it; a hold of an older release (no pods named) stands', () => {
    expect(heldInconclusive({ ...held, holdPods: PODS }, 'new', sts(), PODS)).toBe(true);
    expect(heldInconclusive({ ...held, holdPods: PODS }, 'new', sts(), podsIdentity(['a', 'b', 'c2']))).toBe(false);
    expect(heldInconclusive({ ...held, holdPods: undefined }, 'new', sts(), PODS)).toBe(true);
  });
});

describe('podsIdentity', () => {
  it('names the UIDs in ordinal order, eight hex digits', () => {
    expect(podsIdentity(['a', 'b', 'c'])).toMatch(/^[0-9a-f]{8}$/);
    expect(podsIdentity(['a', 'b', 'c'])).toBe(podsIdentity(['a', 'b', 'c']));
    expect(podsIdentity(['a', 'b', 'c'])).not.toBe(podsIdentity(['a', 'c', 'b']));
    expect(podsIdentity(['a', 'b', ''])).not.toBe(podsIdentity(['a', 'b', 'c']));
  });
});

describe('holdIdentity', () => {
  it.each<[string, RolloutStatus | undefined, number, boolean, number]>([
    ['a hold that stands keeps its identity', held, HOLD + 5000, true, HOLD],
    ['a new hold is now', { ...held, hold: undefined }, HOLD + 5000, false, HOLD + 5000],
    ['a new hold is later than the one shown, whatever this clock says', held, HOLD - 10, false, HOLD + 1],
    ['a standing hold without identity (an older controller) gets one now', { ...held, hold: undefined }, HOLD + 7, true, HOLD + 7],
  ])('%s', (_, prev, now, standing, want) => expect(holdIdentity(prev, now, standing)).toBe(want));
});

describe('judgePromotion', () => {
  const token = `new@2@${HOLD}`;
  it.each<[string, RolloutStatus | undefined, Partial<StatefulSetView>, string | undefined, boolean, boolean, string | undefined]>([
    // name, status, sts, promote, held, promoted?, refusal contains
    ['the standing hold, promoted', held, {}, token, true, true, undefined],
    ['no promotion', held, {}, undefined, true, false, undefined],
    ['another partition: not this step, nothing to say', held, {}, `new@1@${HOLD}`, true, false, undefined],
    ['another revision', held, {}, `other@2@${HOLD}`, true, false, undefined],
    ['an earlier hold of the same step', held, {}, `new@2@${HOLD - 1}`, true, false, 'names another hold'],
    ['a since-based token of an older plugin', held, {}, `new@2@${Math.floor(HOLD / 1000)}`, true, false, 'names another hold'],
    ['a hold without identity', { ...held, hold: undefined }, {}, `new@2@${Math.floor(HOLD / 1000)}`, true, false, 'without an identity'],
    ['in force (status promoted) while the step waits for a pod', { ...held, phase: 'WaitingForPods', reason: undefined, promoted: token }, {}, token, false, true, undefined],
    ['in force, but scaled since', { ...held, phase: 'WaitingForPods', reason: undefined, promoted: token }, { replicas: 2 }, token, false, false, 'no inconclusive hold stands'],
    ['the hold ended by a scale', held, { replicas: 2 }, token, false, false, 'replicas changed from 3 to 2'],
    ['in force, but a pod it judged was replaced', { ...held, phase: 'WaitingForPods', reason: undefined, promoted: token, holdPods: podsIdentity(['x']) }, {}, token, false, false, 'no inconclusive hold stands'],
    ['the hold ended by a replaced pod', { ...held, holdPods: podsIdentity(['x']) }, {}, token, false, false, 'a pod it judged was replaced'],
    ['refused before: said once', { ...held, promotionRefused: `new@2@${HOLD - 1}` }, {}, `new@2@${HOLD - 1}`, true, false, undefined],
  ])('%s', (_, prev, o, promote, isHeld, promoted, refusal) => {
    const s = sts(o, promote);
    const d = judgePromotion(cfgOf(s), prev, 'new', s, isHeld, PODS);
    expect(d.promoted).toBe(promoted);
    if (refusal) expect(d.refused).toContain(refusal);
    else expect(d.refused).toBeUndefined();
  });
});
