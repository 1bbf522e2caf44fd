// The gate policies of examples/ are what a user copies first: each must be a policy the controller
// accepts (src/policies/policy.ts), not one that looks right and is refused when applied.
import { loadAllYaml } from '@kubernetes/client-node';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parsePolicySpec } from '../../src/policies/policy.js';

const ROOT = resolve(import.meta.dirname, '../../examples');
const files = readdirSync(ROOT, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.yaml')).sort();
const policies = files.flatMap((f) =>
  (loadAllYaml(readFileSync(join(ROOT, f), 'utf8')) as { kind?: string; metadata?: { name?: string }; spec?: unknown }[])
    .filter((o) => o?.kind === 'RolloutGate' || o?.kind === 'ClusterRolloutGate')
    .map((o) => [`${f}: ${o.kind} ${o.metadata?.name}`, o.spec] as const),
);

describe('the gate policies of examples/', () => {
  it('there are some', () => expect(policies.length).toBeGreaterThan(2));
  it.each(policies)('%s is accepted', (_, spec) => expect(parsePolicySpec(spec)).not.toBeInstanceOf(Array));
  it('the etcd checkpoint is restored by a person only (a Raft member restored behind its leader is stopped)', () => {
    const spec = policies.find(([name]) => name.includes('etcd-checkpoint'))?.[1] as { checkpoint?: { restore?: string } } | undefined;
    expect(spec?.checkpoint?.restore).toBe('manual');
    // manual is the default: the parsed policy carries no restore on rollback.
    const p = parsePolicySpec(spec);
    expect(p).toMatchObject({ checkpoint: { claims: ['data'] } });
    expect((p as { checkpoint?: { restore?: string } }).checkpoint?.restore).toBeUndefined();
  });
});
