// The recipe the bad-migration scenario applies is examples/postgres-single/rolloutgate.yaml as a user
// has it; the controller's own parser accepts it, with its checkpoint and without.
import { parsePolicySpec } from '../../src/policies/policy.js';
import { singleAnnotations, singlePolicy, singleRecipe, singleTiming } from './single-gate.js';

type P = { metadata: { name: string; namespace: string }; spec: { checkpoint?: Record<string, unknown>; jobs: any[] } };

describe('the single member\'s recipe', () => {
  it('is a policy the controller accepts: the schema Job and a checkpoint of the claim, restored on rollback', () => {
    expect(parsePolicySpec(singleRecipe().spec)).toMatchObject({ jobs: [{ name: 'job.schema' }], checkpoint: { claims: ['data'], restore: 'on-rollback' } });
  });

  it.each([
    [true, { volumeSnapshotClassName: 'phased-rollout-csi', claims: ['data'], restore: 'on-rollback' }],
    [false, undefined],
  ])('for the scenario (checkpoint %s): the CSI class, the writer\'s table, its image on the real node', (checkpoint, want) => {
    const p = singlePolicy('pg-x', 'localhost/phased-rollout/postgres:15-abc', checkpoint) as P;
    expect(p.metadata).toEqual({ name: 'postgres-single', namespace: 'pg-x' });
    expect(p.spec.checkpoint).toEqual(want);
    const pod = p.spec.jobs[0].template.spec.template.spec;
    expect(pod.containers[0]).toMatchObject({ image: 'localhost/phased-rollout/postgres:15-abc', imagePullPolicy: 'Never' });
    expect(pod.containers[0].env).toContainEqual({ name: 'TABLES', value: 'public.scenario_writes' });
    expect(pod.nodeSelector).toEqual({ 'phased-rollout.io/real-node': 'true' });
    expect(parsePolicySpec(p.spec)).not.toBeInstanceOf(Array);
  });

  it('the annotations name it; the timing as annotation keys', () => {
    expect(singleAnnotations()).toEqual({ 'phased-rollout.io/enabled': 'true', 'phased-rollout.io/gates': 'postgres-single', 'phased-rollout.io/on-failure': 'rollback' });
    expect(singleTiming()).toEqual({ 'phased-rollout.io/initial-delay-seconds': '10', 'phased-rollout.io/period-seconds': '5', 'phased-rollout.io/success-threshold': '2' });
  });
});
