// The recipe the scenarios apply is examples/postgres/rolloutgate.yaml as a user has it; the CRD's rules
// and the controller's own parser accept it.
import { parsePolicySpec } from '../../src/policies/policy.js';
import { hookConfigMap, policy, queries, recipe, timing } from './gate.js';

describe('the PostgreSQL recipe', () => {
  it('is a policy the controller accepts: four queries, the streaming Job, the switchover hook', () => {
    const p = parsePolicySpec(recipe().spec);
    expect(Array.isArray(p)).toBe(false);
    expect(p).toMatchObject({ queries: [{ name: 'query.members-running' }, { name: 'query.one-primary' }, { name: 'query.caught-up' }, { name: 'query.no-recent-leader-change' }], jobs: [{ name: 'job.streaming' }], hooks: [{ name: 'hook.switchover', when: 'prepare', timeoutSeconds: 120 }] });
  });

  it('for the scenario: its namespace and image in every Job, on the real node; without hooks for ours-no-hooks', () => {
    const p = policy('pg-x', 'localhost/phased-rollout/postgres:15-abc', true) as { metadata: { namespace: string }; spec: { jobs: any[]; hooks?: any[] } };
    expect(p.metadata.namespace).toBe('pg-x');
    for (const j of [...p.spec.jobs, ...(p.spec.hooks ?? [])]) {
      const pod = j.template.spec.template.spec;
      expect(pod.containers[0]).toMatchObject({ image: 'localhost/phased-rollout/postgres:15-abc', imagePullPolicy: 'Never' });
      expect(pod.nodeSelector).toEqual({ 'phased-rollout.io/real-node': 'true' });
    }
    expect((policy('pg-x', 'i', false) as { spec: { hooks?: unknown } }).spec.hooks).toBeUndefined();
    expect(Array.isArray(parsePolicySpec((policy('pg-x', 'i', false) as { spec: unknown }).spec))).toBe(false);
  });

  it('queries with the namespace filled in, the timing as annotation keys, the hook script in a ConfigMap', () => {
    expect(queries('pg-x')['query.one-primary']).toBe('sum(patroni_primary{namespace="pg-x",app="postgres"}) == 1');
    expect(timing()).toEqual({ 'phased-rollout.io/initial-delay-seconds': '15', 'phased-rollout.io/period-seconds': '5', 'phased-rollout.io/success-threshold': '3' });
    expect((hookConfigMap('pg-x') as { data: Record<string, string> }).data['switchover.py']).toContain('/switchover');
  });
});
