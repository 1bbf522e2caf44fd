// PodDisruptionBudgets and partition steps. A step is a voluntary disruption that the StatefulSet
// controller makes without the eviction API, so no PDB would ever stop it: the planner asks the PDBs
// itself before each step. Pure: the shell hands in the PDBs whose selector matches the pods.
import type { BudgetView, StatefulSetView } from './types.js';

/** BudgetAnswer is how many pods the PDBs let a step take down at once, or why none. */
export type BudgetAnswer = { allowed: number } | { hold: string };

/**
 * budgetAllows reads the PDBs over a StatefulSet's pods. A PDB whose status the disruption controller
 * has not computed for its current spec (observedGeneration behind generation) says nothing reliable,
 * so it holds like one that allows no disruption. With no PDB, nothing limits the step.
 */
export function budgetAllows(budgets: readonly BudgetView[]): BudgetAnswer {
  let allowed = Infinity;
  for (const b of [...budgets].sort((x, y) => (x.name < y.name ? -1 : 1))) {
    if (b.observedGeneration < b.generation) return { hold: `PodDisruptionBudget ${b.name} has no status for its generation ${b.generation} yet` };
    if (b.disruptionsAllowed < 1) return { hold: `PodDisruptionBudget ${b.name} allows no disruption now (${b.currentHealthy} healthy, ${b.desiredHealthy} required)` };
    allowed = Math.min(allowed, b.disruptionsAllowed);
  }
  return { allowed };
}

/**
 * downAtOnce is how many pods a step from partition `from` to `to` takes down at the same time: up to
 * maxUnavailable, whatever the pod management policy. With the MaxUnavailableStatefulSet feature on, the
 * StatefulSet controller's rolling update deletes up to maxUnavailable pods at once under OrderedReady
 * too (its update loop never looks at podManagementPolicy); with it off, the API server drops the field,
 * so it is absent here and the controller replaces one pod at a time.
 */
export function downAtOnce(s: Pick<StatefulSetView, 'parallel' | 'maxUnavailable'>, from: number, to: number): number {
  const released = Math.max(0, from - to);
  return Math.min(released, Math.max(1, s.maxUnavailable ?? 1));
}

/**
 * budgetTarget fits a step to the PDBs: where the partition may go from `from` instead of `to`, or why
 * it must hold. With maxUnavailable (either pod management policy), a stage that would take down more pods than the
 * PDBs allow is cut to what they allow (PDB-sized parallelism); the rest of the stage is the next step.
 */
export function budgetTarget(s: Pick<StatefulSetView, 'parallel' | 'maxUnavailable'>, from: number, to: number, budgets: readonly BudgetView[]): { to: number } | { hold: string } {
  if (budgets.length === 0 || to >= from) return { to };
  const a = budgetAllows(budgets);
  if ('hold' in a) return a;
  if (downAtOnce(s, from, to) <= a.allowed) return { to };
  return { to: Math.max(to, from - a.allowed) };
}
