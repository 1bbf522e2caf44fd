import { budgetAllows, budgetTarget, downAtOnce } from './budgets.js';
import type { BudgetView } from './types.js';

const pdb = (name: string, allowed: number, o: Partial<BudgetView> = {}): BudgetView => ({ name, generation: 1, observedGeneration: 1, disruptionsAllowed: allowed, currentHealthy: 3, desiredHealthy: 2, ...o });

describe('budgetAllows', () => {
  it.each([
    ['no PDB', [], { allowed: Infinity }],
    ['one PDB', [pdb('a', 2)], { allowed: 2 }],
    ['the smallest of several', [pdb('a', 2), pdb('b', 1)], { allowed: 1 }],
    ['none allowed', [pdb('a', 2), pdb('b', 0, { currentHealthy: 2 })], { hold: 'PodDisruptionBudget b allows no disruption now (2 healthy, 2 required)' }],
    ['a status behind its spec', [pdb('a', 1, { generation: 2 })], { hold: 'PodDisruptionBudget a has no status for its generation 2 yet' }],
  ])('%s', (_n, budgets, want) => expect(budgetAllows(budgets)).toEqual(want));
});

describe('downAtOnce', () => {
  it.each([
    ['OrderedReady, one pod', {}, 5, 4, 1],
    ['OrderedReady, a stage of three: one at a time', {}, 5, 2, 1],
    ['Parallel without maxUnavailable: one at a time', { parallel: true }, 5, 2, 1],
    // MaxUnavailableStatefulSet: the StatefulSet controller deletes up to maxUnavailable pods at once
    // under OrderedReady too (its update loop has no pod-management check; test/e2e/steps.test.ts).
    ['OrderedReady, maxUnavailable 3, stage of 4', { maxUnavailable: 3 }, 6, 2, 3],
    ['OrderedReady, maxUnavailable 3, one pod', { maxUnavailable: 3 }, 6, 5, 1],
    ['Parallel, maxUnavailable 3, stage of 4', { parallel: true, maxUnavailable: 3 }, 6, 2, 3],
    ['Parallel, maxUnavailable 3, stage of 2', { parallel: true, maxUnavailable: 3 }, 6, 4, 2],
    ['no step', {}, 3, 3, 0],
  ])('%s', (_n, s, from, to, want) => expect(downAtOnce(s, from, to)).toBe(want));
});

describe('budgetTarget', () => {
  const par = { parallel: true, maxUnavailable: 3 };
  it.each([
    ['no PDB: the step as planned', par, 6, 2, [], { to: 2 }],
    ['a PDB that allows it', par, 6, 2, [pdb('a', 3)], { to: 2 }],
    ['a stage cut to what the PDB allows', par, 6, 2, [pdb('a', 2)], { to: 4 }],
    ['OrderedReady with one allowed: the whole stage (one pod down at a time)', {}, 6, 2, [pdb('a', 1)], { to: 2 }],
    ['OrderedReady with maxUnavailable 3 and one allowed: cut to one pod', { maxUnavailable: 3 }, 6, 2, [pdb('a', 1)], { to: 5 }],
    ['OrderedReady with maxUnavailable 3 and two allowed: cut to two pods', { maxUnavailable: 3 }, 6, 1, [pdb('a', 2)], { to: 4 }],
    ['none allowed: hold', {}, 6, 5, [pdb('a', 0)], { hold: 'PodDisruptionBudget a allows no disruption now (3 healthy, 2 required)' }],
    ['not a lowering: never held', {}, 6, 6, [pdb('a', 0)], { to: 6 }],
  ])('%s', (_n, s, from, to, budgets, want) => expect(budgetTarget(s, from, to, budgets)).toEqual(want));
});
