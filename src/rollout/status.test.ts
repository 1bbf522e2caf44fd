import { KEYS } from '../annotations.js';
import { readStatus, statusChanged } from './status.js';
import type { RolloutStatus } from './types.js';

const base = { phase: 'Checking', revision: 'r2', partition: 2, replicas: 3, updated: 1, message: 'gate 1/2', since: '2026-01-01T00:00:00Z' };
const read = (v: unknown) => readStatus({ [KEYS.status]: typeof v === 'string' ? v : JSON.stringify(v) });

describe('readStatus', () => {
  it('reads a status the controller wrote, optional fields included', () => {
    const full = { ...base, gate: 'passing', streak: 1, promotion: 2, failedRevision: 'r1', failureReason: 'Aborted', previousRevision: 'r1', waitingToStart: true };
    expect(read(full)).toEqual(full);
  });

  // A field of the wrong type makes the whole status unreadable (no status): a forged `promotion` string
  // must never reach the dashboard's confirmation text, nor a forged count a decision.
  it.each([
    ['not JSON', '{'],
    ['an array', [base]],
    ['an unknown phase', { ...base, phase: 'Rolling' }],
    ['no revision', { ...base, revision: undefined }],
    ['promotion as a string', { ...base, promotion: '1; kubectl delete ns prod' }],
    ['a negative partition', { ...base, partition: -1 }],
    ['a fractional streak', { ...base, streak: 1.5 }],
    ['a message that is not text', { ...base, message: { html: '<b>' } }],
    ['an unknown gate state', { ...base, gate: 'green' }],
    ['an unknown failure reason', { ...base, failureReason: 'Because' }],
    ['previousRevision not text', { ...base, previousRevision: 7 }],
    ['waitingToStart not a boolean', { ...base, waitingToStart: 'yes' }],
  ])('%s: no status', (_n, v) => expect(read(v)).toBeUndefined());
});

describe('statusChanged', () => {
  const s = base as RolloutStatus;
  it('writes when the revision a rollback returns to is first recorded', () => {
    expect(statusChanged(s, { ...s, previousRevision: 'r1' })).toBe(true);
    expect(statusChanged({ ...s, previousRevision: 'r1' }, { ...s, previousRevision: 'r1' })).toBe(false);
  });
});
