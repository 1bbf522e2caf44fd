import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { loadAllYaml } from '@kubernetes/client-node';
import { KEYS, parseAnnotations } from '../../src/annotations.js';
import { withPolicies } from '../../src/policies/merge.js';
import { parsePolicySpec } from '../../src/policies/policy.js';
import { filled, gateAnnotations, gatePolicy, QUERIES } from './gate.js';

const ROOT = resolve(import.meta.dirname, '..', '..');

describe('the etcd gate recipe', () => {
  it('is valid phased-rollout configuration (the webhook would admit it)', () => {
    const parsed = parseAnnotations(gateAnnotations());
    expect(parsed.ok ? [] : parsed.problems).toEqual([]);
    expect(parsed.optIn).toBe('on');
  });

  it('is the same in examples/etcd/statefulset.yaml', () => {
    const docs = loadAllYaml(readFileSync(resolve(ROOT, 'examples', 'etcd', 'statefulset.yaml'), 'utf8')) as { kind: string; metadata: { annotations?: Record<string, string> } }[];
    const sts = docs.find((d) => d.kind === 'StatefulSet');
    expect(sts?.metadata.annotations).toEqual(gateAnnotations());
  });

  it('ships as a RolloutGate (examples/etcd/rolloutgate.yaml) that gives a StatefulSet naming it the same gates and timing', () => {
    const docs = loadAllYaml(readFileSync(resolve(ROOT, 'examples', 'etcd', 'rolloutgate.yaml'), 'utf8')) as { kind: string; metadata: { name: string }; spec: unknown }[];
    const gate = docs.find((d) => d.kind === 'RolloutGate');
    expect(gate?.spec).toEqual(gatePolicy());
    const policy = parsePolicySpec(gate?.spec);
    if (Array.isArray(policy)) throw new Error(policy.join('; '));
    const ann = { [KEYS.enabled]: 'true', [KEYS.gates]: gate?.metadata.name ?? '', [KEYS.onFailure]: 'rollback' };
    const parsed = parseAnnotations(ann);
    const own = parseAnnotations(gateAnnotations());
    if (!parsed.ok || !parsed.config || !own.ok || !own.config) throw new Error('recipe does not parse');
    const merged = withPolicies(parsed.config, ann, { [gate?.metadata.name ?? '']: policy });
    if ('problem' in merged) throw new Error(merged.problem);
    const { initialDelaySeconds, periodSeconds, successThreshold, failureThreshold, onFailure } = own.config;
    expect(merged).toMatchObject({ initialDelaySeconds, periodSeconds, successThreshold, failureThreshold, onFailure });
    expect(merged.gates.map((g) => g.query).sort()).toEqual(own.config.gates.map((g) => g.query).sort());
  });

  it('every query appears in docs/etcd.md', () => {
    const doc = readFileSync(resolve(ROOT, 'docs', 'etcd.md'), 'utf8');
    for (const q of Object.values(QUERIES)) expect(doc).toContain(q);
  });

  it('fills in the namespace', () => {
    expect(filled(QUERIES['no-learners'] as string, 'db')).toBe('max(etcd_server_is_learner{namespace="db",app="etcd"}) == 0');
  });

  it('ships a Job gate (examples/etcd/rolloutgate-health-job.yaml) that the controller accepts and joins with the queries', () => {
    const docs = loadAllYaml(readFileSync(resolve(ROOT, 'examples', 'etcd', 'rolloutgate-health-job.yaml'), 'utf8')) as { kind: string; metadata: { name: string }; spec: unknown }[];
    const gate = docs.find((d) => d.kind === 'RolloutGate');
    const policy = parsePolicySpec(gate?.spec);
    if (Array.isArray(policy)) throw new Error(policy.join('; '));
    expect(policy.jobs.map((j) => [j.name, j.runs, j.timeoutSeconds])).toEqual([['job.endpoints', 'step', 60]]);
    const ann = { [KEYS.enabled]: 'true', [KEYS.gates]: 'etcd-quorum, etcd-health' };
    const parsed = parseAnnotations(ann);
    if (!parsed.ok || !parsed.config) throw new Error('annotations do not parse');
    const merged = withPolicies(parsed.config, ann, { 'etcd-quorum': parsePolicySpec(gatePolicy()) as Exclude<ReturnType<typeof parsePolicySpec>, string[]>, 'etcd-health': policy });
    if ('problem' in merged) throw new Error(merged.problem);
    expect(merged.jobGates.map((j) => j.name)).toEqual(['etcd-health/job.endpoints']);
    expect(merged.gates).toHaveLength(Object.keys(QUERIES).length);
  });
});
