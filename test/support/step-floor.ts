// The lowest partition one gated step may reach, restated for the independent checks (the plan()
// property oracle and the audit-log safety checker) without the planner's code.

/**
 * stepFloor: from partition p, with `notUpdated(j)` telling which pods below p still run another
 * revision, one step may go down to the next such pod q; with a phased-rollout.io/steps value, to the
 * smallest stage (cumulative pods, percentages rounded up, capped at replicas) that covers pod q.
 */
export function stepFloor(p: number, replicas: number, steps: string | undefined, notUpdated: (j: number) => boolean): number {
  let q = 0;
  for (let j = p - 1; j >= 0; j--) {
    if (notUpdated(j)) {
      q = j;
      break;
    }
  }
  if (!steps) return q;
  const stages = steps.split(',').map((x) => {
    const v = x.trim();
    return Math.min(replicas, v.endsWith('%') ? Math.ceil((Number(v.slice(0, -1)) * replicas) / 100) : Number(v));
  });
  return replicas - Math.min(...stages.filter((n) => n >= replicas - q), replicas);
}
