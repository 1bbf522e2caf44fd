import { migrationLine, resultLine, unmet, unmetMigration, type Seen, type SeenMigration } from './results.js';

const ok: Seen = { lost: 0, onNew: 3, members: 3, failovers: 0, switchovers: 1, maxOnNew: 3, violations: [], gatedSteps: 3 };

describe('resultLine', () => {
  it('is the etcd form with failovers and switchovers', () => {
    expect(resultLine('upgrade', 'ours', { acked: 900, lost: 0, failed: 2, unavailableS: 2.04, p99Ms: 41.6 }, 3, 3, 0, 1)).toBe('RESULT scenario=upgrade system=ours acked=900 lost=0 failed=2 unavailable_s=2.0 p99_ms=42 members_on_new=3/3 failovers=0 switchovers=1');
  });
});

describe('unmet', () => {
  it.each([
    ['upgrade', ok, []],
    ['upgrade', { ...ok, lost: 4 }, ['lost 4 acknowledged commits (want 0)']],
    ['upgrade', { ...ok, failovers: 1 }, [expect.stringMatching(/^1 unplanned failovers/)]],
    ['upgrade', { ...ok, switchovers: 2 }, ['2 switchovers (want at most one per rollout)']],
    ['upgrade', { ...ok, onNew: 2, gatedSteps: 2 }, ['2/3 members on the new template (want all)', '2 gated partition steps in the audit log (want 3)']],
    ['bad-release', { ...ok, onNew: 0, maxOnNew: 1, switchovers: 0 }, []],
    ['bad-release', { ...ok, onNew: 0, maxOnNew: 2 }, ['2 members on the bad release at once (want at most 1)']],
    ['bad-release', { ...ok, onNew: 1, maxOnNew: 1, violations: ['stepped on a failing gate'] }, ['safety checker: stepped on a failing gate', '1 members still on the bad release (want 0: rolled back)']],
  ] as const)('%s %j', (scenario, seen, want) => expect(unmet(scenario, seen)).toEqual(want));
});

describe('migrationLine', () => {
  const s = { acked: 1400, lost: 31, failed: 220, unavailableS: 41.26, p99Ms: 12.4 };
  it('is the PostgreSQL form with what the restore gave back and cost', () => {
    expect(migrationLine('ours', s, 0, { tableBack: true, beforeCutLost: 0, afterCutLost: 31, healthyAtEnd: true })).toBe('RESULT scenario=bad-migration system=ours acked=1400 lost=31 failed=220 unavailable_s=41.3 p99_ms=12 members_on_new=0/1 failovers=0 switchovers=0 table_back=yes rows_before_checkpoint_lost=0 lost_after_checkpoint=31 healthy_at_end=yes');
    expect(migrationLine('plain', s, 1, { tableBack: false, beforeCutLost: 300, afterCutLost: 8, healthyAtEnd: false })).toMatch(/members_on_new=1\/1 .* table_back=no rows_before_checkpoint_lost=300 lost_after_checkpoint=8 healthy_at_end=no$/);
  });
});

describe('unmetMigration', () => {
  const restored: SeenMigration = { tableBack: true, beforeCutLost: 0, afterCutLost: 31, healthyAtEnd: true, onNew: 0, maxOnNew: 1, checkpointCut: true, restoresCompleted: 1, violations: [], gatedSteps: 1 };
  it.each([
    ['restored', restored, []],
    ['no restore: the table stays dropped', { ...restored, restoresCompleted: 0, tableBack: false, healthyAtEnd: false }, ['no RestoreCompleted Event (want the member restored from its checkpoint)', 'the table is still gone (want it back from the checkpoint)', 'the application does not write at the end (want every write of the last seconds acknowledged)']],
    ['a write before the cut lost', { ...restored, beforeCutLost: 2 }, ['2 writes acknowledged before the checkpoint lost (want 0)']],
    ['no checkpoint cut, not rolled back', { ...restored, checkpointCut: false, onNew: 1 }, ['1 members still on the release (want 0: rolled back)', 'no checkpoint of the member was cut']],
    ['the safety checker', { ...restored, violations: ['released pod postgres-0 without a checkpoint'], gatedSteps: 0 }, ['safety checker: released pod postgres-0 without a checkpoint', '0 gated partition steps in the audit log (want 1: the member released once)']],
  ] as const)('%s', (_, seen, want) => expect(unmetMigration(seen)).toEqual(want));
});
