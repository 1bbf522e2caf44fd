// The RESULT line of the PostgreSQL scenarios (the etcd form, plus how the primary role moved) and what a
// run of ours must show. Pure: rows in results.test.ts.
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
