// The RESULT line of the PostgreSQL scenarios (the etcd form, plus how the primary role moved; for
// bad-migration, what the restore gave back and cost) and what a run of ours must show. Pure: rows in
// results.test.ts.
import { resultLine as etcdLine, type Summary } from '../etcd/results.js';

/** resultLine is the etcd scenarios' line with failovers= (the primary lost, another took over) and switchovers= (handed over). */
export function resultLine(scenario: string, system: string, s: Summary, onNew: number, members: number, failovers: number, switchovers: number): string {
  return `${etcdLine(scenario, system, s, onNew, members)} failovers=${failovers} switchovers=${switchovers}`;
}

/** Seen is what a finished run reports to the expectations. */
export interface Seen {
  lost: number;
  onNew: number;
  members: number;
  failovers: number;
  switchovers: number;
  maxOnNew: number;
  violations: readonly string[];
  gatedSteps: number;
}

/**
 * unmet lists what a run of ours (with the switchover hook) did not show. ours-no-hooks and plain are
 * reported, never judged: their rows show what happens without the hook, or without phased-rollout.
 */
export function unmet(scenario: string, s: Seen): string[] {
  const out: string[] = [];
  const want = (ok: boolean, what: string) => ok || out.push(what);
  want(s.lost === 0, `lost ${s.lost} acknowledged commits (want 0)`);
  want(s.failovers === 0, `${s.failovers} unplanned failovers (want 0: the primary is switched over before its pod goes)`);
  for (const v of s.violations) out.push(`safety checker: ${v}`);
  if (scenario === 'upgrade') {
    want(s.onNew === s.members, `${s.onNew}/${s.members} members on the new template (want all)`);
    want(s.switchovers <= 1, `${s.switchovers} switchovers (want at most one per rollout)`);
    want(s.gatedSteps === s.members, `${s.gatedSteps} gated partition steps in the audit log (want ${s.members})`);
  } else {
    want(s.maxOnNew <= 1, `${s.maxOnNew} members on the bad release at once (want at most 1)`);
    want(s.onNew === 0, `${s.onNew} members still on the bad release (want 0: rolled back)`);
  }
  return out;
}

/** Restored is what bad-migration adds to the RESULT line: what the rollback gave back, and what it cost. */
export interface Restored {
  tableBack: boolean;
  /** Acknowledged writes missing at the end, acknowledged before the checkpoint's cut (or, with none, before the member's pod went). */
  beforeCutLost: number;
  /** The same, acknowledged after it: what a restore from the checkpoint costs. */
  afterCutLost: number;
  healthyAtEnd: boolean;
}

/** migrationLine is the PostgreSQL line with table_back, rows_before_checkpoint_lost, lost_after_checkpoint and healthy_at_end. */
export function migrationLine(system: string, s: Summary, onNew: number, r: Restored): string {
  const yes = (b: boolean) => (b ? 'yes' : 'no');
  return `${resultLine('bad-migration', system, s, onNew, 1, 0, 0)} table_back=${yes(r.tableBack)} rows_before_checkpoint_lost=${r.beforeCutLost} lost_after_checkpoint=${r.afterCutLost} healthy_at_end=${yes(r.healthyAtEnd)}`;
}

/** SeenMigration is what a finished bad-migration run reports to its expectations. */
export interface SeenMigration extends Restored {
  onNew: number;
  maxOnNew: number;
  /** The cut was a checkpoint's (not merely the moment the pod went). */
  checkpointCut: boolean;
  restoresCompleted: number;
  violations: readonly string[];
  gatedSteps: number;
}

/**
 * unmetMigration lists what a bad-migration run of ours (with the checkpoint) did not show.
 * ours-no-checkpoint and plain are reported, never judged: their rows show the damage that stays.
 */
export function unmetMigration(s: SeenMigration): string[] {
  const out: string[] = [];
  const want = (ok: boolean, what: string) => ok || out.push(what);
  for (const v of s.violations) out.push(`safety checker: ${v}`);
  want(s.gatedSteps === 1, `${s.gatedSteps} gated partition steps in the audit log (want 1: the member released once)`);
  want(s.maxOnNew <= 1 && s.onNew === 0, `${s.onNew} members still on the release (want 0: rolled back)`);
  want(s.checkpointCut, 'no checkpoint of the member was cut');
  want(s.restoresCompleted >= 1, 'no RestoreCompleted Event (want the member restored from its checkpoint)');
  want(s.tableBack, 'the table is still gone (want it back from the checkpoint)');
  want(s.beforeCutLost === 0, `${s.beforeCutLost} writes acknowledged before the checkpoint lost (want 0)`);
  want(s.healthyAtEnd, 'the application does not write at the end (want every write of the last seconds acknowledged)');
  return out;
}
