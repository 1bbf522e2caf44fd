import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { loadAllYaml } from '@kubernetes/client-node';
import { parseAnnotations } from '../../src/annotations.js';
import { filled, gateAnnotations, QUERIES } from './gate.js';

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

  it('every query appears in docs/etcd.md', () => {
    const doc = readFileSync(resolve(ROOT, 'docs', 'etcd.md'), 'utf8');
    for (const q of Object.values(QUERIES)) expect(doc).toContain(q);
  });

  it('fills in the namespace', () => {
    expect(filled(QUERIES['no-learners'] as string, 'db')).toBe('max(etcd_server_is_learner{namespace="db",app="etcd"}) == 0');
  });
});
