// What each scenario must show with phased-rollout (system=ours), as data: main.ts prints what was not
// met and exits non-zero; the end-to-end test asserts the same. The plain StatefulSet controller is only
// reported, never judged: its rows show what happens without phased-rollout.

/** ELECTION_S bounds one leader election as the writer sees it: etcd's election timeout (1 s) randomised up
 *  to twice that, plus one write attempt (1 s) to the member that has just gone. */
export const ELECTION_S = 3;

/** Seen is what a finished scenario reports. */
export interface Seen {
  lost: number;
  unavailableS: number;
  onNew: number;
  members: number;
  details: Record<string, string | number>;
  violations: string[];
  /** Partition steps the safety checker found gated (none read from the audit log would fail every scenario). */
  gatedSteps: number;
  /** Members that follow a leader and serve once the rollout settled (damaged-release). */
  healthy?: number;
}

/** unmet lists the expectations of a scenario that a run of ours did not meet (empty: all met). */
export function unmet(scenario: string, s: Seen): string[] {
  const out: string[] = [];
  const want = (ok: boolean, what: string) => ok || out.push(what);
  want(s.lost === 0, `lost ${s.lost} acknowledged writes (want 0)`);
  for (const v of s.violations) out.push(`safety checker: ${v}`);
  const d = (k: string) => Number(s.details[k]);
  const steps = (n: number) => want(s.gatedSteps === n, `${s.gatedSteps} gated partition steps in the audit log (want ${n})`);
  switch (scenario) {
    case 'upgrade':
    case 'controller-kill':
      want(s.onNew === s.members, `${s.onNew}/${s.members} members on the new release (want all)`);
      want(s.unavailableS <= ELECTION_S, `no write acknowledged for ${s.unavailableS.toFixed(1)} s (want at most one election, ${ELECTION_S} s)`);
      steps(s.members);
      if (scenario === 'controller-kill') want(d('controller_kills') >= 1, `${d('controller_kills')} controller pods deleted (want one at each step)`);
      break;
    case 'bad-release':
      // One step: the bad release's first member, after the gate passed on the healthy cluster.
      steps(1);
      want(d('max_on_new') <= 1, `${d('max_on_new')} members on the bad release at once (want at most 1)`);
      want(s.onNew === 0, `${s.onNew} members still on the bad release (want 0: rolled back)`);
      want(s.unavailableS <= ELECTION_S, `no write acknowledged for ${s.unavailableS.toFixed(1)} s (want the quorum of two to serve throughout)`);
      break;
    case 'damaged-release':
      // One step, as for the bad release; then the rollback gives the damaged member its checkpoint back.
      steps(1);
      want(d('max_on_new') <= 1, `${d('max_on_new')} members on the damaging release at once (want at most 1)`);
      want(s.onNew === 0, `${s.onNew} members still on the damaging release (want 0: rolled back)`);
      want(s.unavailableS <= ELECTION_S, `no write acknowledged for ${s.unavailableS.toFixed(1)} s (want the quorum of two to serve throughout)`);
      want(s.healthy === s.members, `${s.healthy ?? '?'}/${s.members} members follow a leader and serve once settled (want all: the damaged member restored from its checkpoint)`);
      break;
    case 'zones':
      want(s.onNew === s.members, `${s.onNew}/${s.members} members on the new release (want all)`);
      steps(s.members);
      want(d('max_down') <= 1, `${d('max_down')} members down at once (want at most 1)`);
      want(d('steps_while_b_down') === 0, `${d('steps_while_b_down')} partition steps while etcd-b was down (want 0)`);
      break;
  }
  return out;
}
