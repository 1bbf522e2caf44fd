// The controller's side of a restore on rollback: which marks are its own and of which member, and the
// id a restore keeps across a restart (controller/restores.ts; the steps are src/checkpoints/restore.ts's).
import { idKey } from '../src/checkpoints/restore.js';
import { ownMarks, rollbackId } from './restores.js';

describe('ownMarks', () => {
  it('only the controller-made marks of this StatefulSet, by member', () => {
    const marks = {
      'data-pg-0': 'snap-a',
      [idKey('data-pg-0')]: 'rb-0123456789ab',
      'wal-pg-0': 'snap-b',
      [idKey('wal-pg-0')]: 'rb-0123456789ab',
      'data-pg-1': 'snap-c',
      [idKey('data-pg-1')]: 'beef0123', // a person's restore (the command): not the controller's to finish
      'data-pgx-0': 'snap-d',
      [idKey('data-pgx-0')]: 'rb-1', // another StatefulSet
      'data-pg-0.storage-class': 'csi',
    };
    expect([...ownMarks(marks, 'pg', ['data', 'wal']).entries()]).toEqual([['pg-0', [{ claim: 'data-pg-0', snapshot: 'snap-a', id: 'rb-0123456789ab' }, { claim: 'wal-pg-0', snapshot: 'snap-b', id: 'rb-0123456789ab' }]]]);
  });
  it('a claim of a template the StatefulSet does not have is not its own', () => expect(ownMarks({ 'logs-pg-0': 's', [idKey('logs-pg-0')]: 'rb-1' }, 'pg', ['data']).size).toBe(0));
});

describe('rollbackId', () => {
  it('the same pod and checkpoint: the same id (a restarted controller goes on); another: another', () => {
    expect(rollbackId('u1', 'a')).toBe(rollbackId('u1', 'a'));
    expect(rollbackId('u1', 'a')).toMatch(/^rb-[0-9a-f]{12}$/);
    expect(rollbackId('u1', 'b')).not.toBe(rollbackId('u1', 'a'));
    expect(rollbackId('u2', 'a')).not.toBe(rollbackId('u1', 'a'));
  });
});
