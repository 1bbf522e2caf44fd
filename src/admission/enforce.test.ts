// The webhook's decision under ClusterRolloutGates that select the request's namespace: each refusal of
// an enforcing policy, the pin and the opt-in it adds, and the fail-closed answer while the caches
// cannot tell.
import fastJsonPatch from 'fast-json-patch';
import { KEYS } from '../annotations.js';
import { decide, ROW_ENFORCED, ROW_POLICIES_UNKNOWN, type Decision, type NamespacePolicies } from './decide.js';
import { MAX_WARNING_LENGTH } from './messages.js';
import type { AdmissionRequest, KubeObject } from './review.js';

const CONTROLLER = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';
const opts = { controllerUsernames: new Set([CONTROLLER]) };
const ENFORCED: NamespacePolicies = { known: true, selected: [{ ref: 'cluster/audit', enforce: true }] };
const ADVISED: NamespacePolicies = { known: true, selected: [{ ref: 'cluster/slo', enforce: false }] };
const NONE: NamespacePolicies = { known: true, selected: [] };

function sts(annotations: Record<string, string> | undefined, o: { image?: string; partition?: number } = {}): KubeObject {
  const spec: KubeObject = { replicas: 3, selector: { matchLabels: { app: 'db' } }, template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: o.image ?? 'db:1' }] } } };
  if (o.partition !== undefined) spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { partition: o.partition } };
  return { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db', namespace: 'bank', ...(annotations ? { annotations } : {}) }, spec };
}

function req(operation: string, object: unknown, oldObject?: unknown, username = 'alice'): AdmissionRequest {
  return { uid: 'u1', kind: { group: 'apps', version: 'v1', kind: 'StatefulSet' }, resource: { group: 'apps', version: 'v1', resource: 'statefulsets' }, name: 'db', namespace: 'bank', operation, userInfo: { username }, object, oldObject };
}

const applied = (obj: KubeObject, d: Decision): KubeObject => (d.type === 'patch' ? fastJsonPatch.applyPatch(structuredClone(obj), d.patch, true, false).newDocument : obj);
const after = (r: AdmissionRequest, d: Decision) => applied(r.object as KubeObject, d);

describe('decide under an enforcing ClusterRolloutGate', () => {
  const pinned = { spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 3 } } } };

  it.each<[string, AdmissionRequest, string]>([
    ['opting out with "false"', req('CREATE', sts({ [KEYS.enabled]: 'false' })), `${KEYS.enabled} cannot be "false" here`],
    ['turning opt-in off on an update', req('UPDATE', sts({ [KEYS.enabled]: 'false' }, { partition: 3 }), sts({ [KEYS.enabled]: 'true' }, { partition: 3 })), `${KEYS.enabled} cannot be "false" here`],
    ['bypassing with standard-rolling-update', req('UPDATE', sts({ [KEYS.enabled]: 'true', [KEYS.standardRollingUpdate]: 'true' }, { partition: 3 }), sts({ [KEYS.enabled]: 'true' }, { partition: 3 })), `${KEYS.standardRollingUpdate} cannot be "true" here`],
    ['bypassing without enabled', req('CREATE', sts({ [KEYS.standardRollingUpdate]: 'true' })), `${KEYS.standardRollingUpdate} cannot be "true" here`],
    ['a dry-run of its gates', req('CREATE', sts({ [KEYS.enabled]: 'true', [KEYS.query]: 'up', [KEYS.dryRun]: 'query, cluster/audit/query.errors' })), `its gates cannot be dry-run (${KEYS.dryRun}: cluster/audit/query.errors)`],
  ])('denies %s, naming the policy', (_, r, what) => {
    const d = decide(r, opts, ENFORCED);
    expect(d).toMatchObject({ type: 'deny', row: ROW_ENFORCED, code: 403, reason: 'Forbidden' });
    expect(d.type === 'deny' && d.message).toBe(`phased-rollout: StatefulSet bank/db: ClusterRolloutGate audit enforces gated rollouts in namespace bank: ${what}; ask the platform team that owns ClusterRolloutGate audit for an exception`);
  });

  it('pins a StatefulSet created without any annotation, and opts it in visibly', () => {
    const r = req('CREATE', sts(undefined));
    const d = decide(r, opts, ENFORCED);
    expect(d).toMatchObject({ type: 'patch', row: 7 });
    expect(after(r, d)).toMatchObject({ metadata: { annotations: { [KEYS.enabled]: 'true' } }, ...pinned });
    expect(d.type !== 'deny' && d.warnings).toEqual([expect.stringContaining('partition pinned to 3'), 'phased-rollout: opted in by ClusterRolloutGate audit, which enforces gated rollouts here']);
    for (const w of d.type !== 'deny' ? d.warnings : []) expect(w.length).toBeLessThanOrEqual(MAX_WARNING_LENGTH);
  });

  it('pins the first change of a StatefulSet that predates the policy (no annotation before or after)', () => {
    const r = req('UPDATE', sts({ team: 'x' }, { image: 'db:2', partition: 0 }), sts({ team: 'x' }, { partition: 0 }));
    const d = decide(r, opts, ENFORCED);
    expect(d).toMatchObject({ type: 'patch', row: 8 });
    expect(after(r, d)).toMatchObject({ metadata: { annotations: { team: 'x', [KEYS.enabled]: 'true' } }, ...pinned });
  });

  it('puts `enabled` back when an apply leaves it out (server-side apply drops what it set before), and the status with it', () => {
    const status = JSON.stringify({ phase: 'Idle', revision: 'r1', partition: 3, replicas: 3, updated: 3, message: '', since: '' });
    const r = req('UPDATE', sts({}, { partition: 3 }), sts({ [KEYS.enabled]: 'true', [KEYS.status]: status }, { partition: 3 }));
    const d = decide(r, opts, ENFORCED);
    expect(d.type).toBe('patch');
    expect(after(r, d).metadata).toEqual({ name: 'db', namespace: 'bank', annotations: { [KEYS.enabled]: 'true', [KEYS.status]: status } });
  });

  it('keeps a status the controller wrote on a StatefulSet the policy opted in without the annotation', () => {
    const status = JSON.stringify({ phase: 'Idle', revision: 'r1', partition: 3, replicas: 3, updated: 3, message: '', since: '' });
    const r = req('UPDATE', sts({ [KEYS.status]: status, team: 'y' }, { partition: 3 }), sts({ [KEYS.status]: status }, { partition: 3 }));
    // Row 8: its first change seen here counts as opting in (pinned, already at 3); only `enabled` is added.
    const d = decide(r, opts, ENFORCED);
    expect(d).toMatchObject({ type: 'patch', row: 8 });
    expect(after(r, d).metadata).toMatchObject({ annotations: { [KEYS.status]: status, team: 'y', [KEYS.enabled]: 'true' } });
  });

  it('needs no query of the StatefulSet\'s own (the policy brings the gates)', () => {
    expect(decide(req('CREATE', sts({ [KEYS.enabled]: 'true' })), opts, ENFORCED)).toMatchObject({ type: 'patch', row: 7 });
    expect(decide(req('CREATE', sts({ [KEYS.enabled]: 'true' })), opts, ADVISED)).toMatchObject({ type: 'patch', row: 7 });
    expect(decide(req('CREATE', sts({ [KEYS.enabled]: 'true' })), opts, NONE)).toMatchObject({ type: 'deny', row: 4 });
  });

  it('leaves the controller\'s own writes alone', () => {
    expect(decide(req('UPDATE', sts({ [KEYS.enabled]: 'true' }, { partition: 1 }), sts({ [KEYS.enabled]: 'true' }, { partition: 2 }), CONTROLLER), opts, ENFORCED)).toEqual({ type: 'allow', row: 3, warnings: [] });
  });
});

describe('decide under a ClusterRolloutGate that selects without enforcing', () => {
  it.each<[string, AdmissionRequest, Partial<Decision>]>([
    ['a StatefulSet not opted in stays out', req('CREATE', sts(undefined)), { type: 'allow', row: 2 }],
    ['opting out is the StatefulSet\'s', req('CREATE', sts({ [KEYS.enabled]: 'false' })), { type: 'allow', row: 2 }],
    ['so is the bypass', req('CREATE', sts({ [KEYS.enabled]: 'true', [KEYS.standardRollingUpdate]: 'true' })), { type: 'allow', row: 6 }],
  ])('%s', (_, r, want) => expect(decide(r, opts, ADVISED)).toMatchObject(want));
});

describe('decide while the caches cannot tell', () => {
  const unknown: NamespacePolicies = { known: false, reason: 'the webhook has not listed ClusterRolloutGates and Namespaces yet' };
  it('denies every StatefulSet write but the controller\'s, saying why and to retry', () => {
    for (const r of [req('CREATE', sts(undefined)), req('CREATE', sts({ [KEYS.enabled]: 'true', [KEYS.query]: 'up' }))]) {
      const d = decide(r, opts, unknown);
      expect(d).toMatchObject({ type: 'deny', row: ROW_POLICIES_UNKNOWN, code: 503, reason: 'ServiceUnavailable' });
      expect(d.type === 'deny' && d.message).toBe('phased-rollout: cannot admit StatefulSet bank/db yet: the webhook has not listed ClusterRolloutGates and Namespaces yet, so whether a ClusterRolloutGate enforces gated rollouts in its namespace is unknown; retry in a few seconds');
    }
    expect(decide(req('UPDATE', sts({ [KEYS.enabled]: 'true' }, { partition: 1 }), sts({ [KEYS.enabled]: 'true' }, { partition: 2 }), CONTROLLER), opts, unknown)).toMatchObject({ type: 'allow', row: 3 });
  });

  it('without cluster policies (no scope) decides as before', () => {
    expect(decide(req('CREATE', sts(undefined)), opts)).toMatchObject({ type: 'allow', row: 2 });
  });
});

// Issue 46 §3.7: a write that drops the status of a StatefulSet opted in by an enforcing policy alone (no
// `enabled` before) did not get it back: the controller's record was lost. Failed before its fix.
describe('the status of a StatefulSet opted in by the policy alone', () => {
  it('is put back when a write drops it', () => {
    const st = JSON.stringify({ phase: 'Checking', revision: 'db-2', partition: 2, replicas: 3, updated: 1, message: '', since: '' });
    const r = req('UPDATE', sts({ team: 'x' }, { partition: 2 }), sts({ team: 'x', [KEYS.status]: st }, { partition: 2 }));
    const d = decide(r, opts, ENFORCED);
    expect(after(r, d)).toMatchObject({ metadata: { annotations: { [KEYS.status]: st } } });
  });
});
