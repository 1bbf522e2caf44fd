import { describe, expect, it } from '@jest/globals';
import { rollout } from './kruise.js';

const steps = (json: string) => (JSON.parse(json) as { spec: { strategy: { canary: { steps: { replicas: number; pause: { duration?: number } }[] } } } }).spec.strategy.canary.steps;

describe("OpenKruise Rollouts' Rollout for a peer run", () => {
  it.each([
    [3, {}, [[1, 0], [2, 0], [3, 0]]],
    [5, { batch: 2 }, [[2, 0], [4, 0], [5, 0]]],
    [1, {}, [[1, 0]]],
    // Held at 3 until approved (a pause with no duration), then the rest at once.
    [6, { holdAt: 3 }, [[3, undefined], [6, 0]]],
  ] as const)('%i pods, %j: steps of [replicas, pause seconds]', (n, o, want) => {
    expect(steps(rollout('ns', 'app', n, o)).map((s) => [s.replicas, s.pause.duration])).toEqual(want);
  });

  it('names the StatefulSet by apps/v1 and lives beside it', () => {
    const r = JSON.parse(rollout('team-a', 'db', 3));
    expect(r).toMatchObject({ apiVersion: 'rollouts.kruise.io/v1beta1', kind: 'Rollout', metadata: { name: 'db', namespace: 'team-a' }, spec: { workloadRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' } } });
  });
});
