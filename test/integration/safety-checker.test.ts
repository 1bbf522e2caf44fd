// The safety checker on crafted audit logs: it accepts a gated rollout and names each kind of unsafe
// step (so it can fail), before it is trusted with real end-to-end runs.
import { checkSafety, type AuditEvent, type GateChange } from '../support/safety-checker.js';

const CTL = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';
const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
let id = 0;
const ev = (s: number, verb: string, objectRef: AuditEvent['objectRef'], requestObject: unknown, user = 'kube-controller-manager', code = 200): AuditEvent => ({
  verb,
  stage: 'ResponseComplete',
  user: { username: user },
  objectRef: { namespace: 'ns', ...objectRef },
  responseStatus: { code },
  requestObject,
  stageTimestamp: at(s),
  auditID: `a${++id}`,
});
const ANN = { 'phased-rollout.io/enabled': 'true', 'phased-rollout.io/query': 'e2e_gate{name="db"} == 1', 'phased-rollout.io/success-threshold': '3', 'phased-rollout.io/period-seconds': '2', 'phased-rollout.io/initial-delay-seconds': '1' };
const status = (s: number, update: string, current: string, ann: Record<string, string> = ANN) =>
  ev(s, 'update', { resource: 'statefulsets', subresource: 'status', name: 'db' }, { metadata: { annotations: ann }, spec: { replicas: 3 }, status: { updateRevision: update, currentRevision: current } });
const podCreate = (s: number, i: number, rev: string) => ev(s, 'create', { resource: 'pods', name: '' }, { metadata: { name: `db-${i}`, labels: { 'controller-revision-hash': rev } } });
const podReady = (s: number, i: number, ready = true) => ev(s, 'patch', { resource: 'pods', subresource: 'status', name: `db-${i}` }, { status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: at(s) }] } });
const lower = (s: number, from: number, to: number, user = CTL, code = 200) =>
  ev(s, 'patch', { resource: 'statefulsets', name: 'db' }, [{ op: 'test', path: '/metadata/generation', value: 2 }, { op: 'test', path: '/spec/updateStrategy/rollingUpdate/partition', value: from }, { op: 'replace', path: '/spec/updateStrategy/rollingUpdate/partition', value: to }], user, code);
const gate = (s: number, value: string): GateChange => ({ at: at(s), name: 'db', value });

/** base: three pods on r1 ready, then revision r2 pinned; the gate passing from t=10. */
const base = (): AuditEvent[] => [podCreate(0, 0, 'r1'), podCreate(0, 1, 'r1'), podCreate(0, 2, 'r1'), podReady(1, 0), podReady(1, 1), podReady(1, 2), status(5, 'r2', 'r1')];
const opts = { controllerUser: CTL, lagMs: 2500 };

describe('checkSafety', () => {
  it('accepts a gated rollout: each step after 3 passes 2 s apart, with the rolled pod ready', () => {
    const events = [...base(), lower(20, 3, 2), podCreate(21, 2, 'r2'), podReady(22, 2), lower(30, 2, 1), podCreate(31, 1, 'r2'), podReady(32, 1), lower(40, 1, 0)];
    const r = checkSafety(events, [gate(10, '1')], opts);
    expect(r.violations).toEqual([]);
    expect(r).toMatchObject({ lowerings: 3, gatedSteps: 3 });
  });

  it.each([
    ['an ungated step (the gate failing)', [...base(), lower(20, 3, 2)], [gate(10, 'absent')], 'gate db was not passing'],
    ['a step too soon after the gate turned passing', [...base(), lower(20, 3, 2)], [gate(18, '1')], 'gate db was not passing'],
    ['a failing blip inside the window', [...base(), lower(20, 3, 2)], [gate(10, '1'), gate(16, '0'), gate(17, '1')], 'gate db was not passing'],
    ['a step while a pod is not ready', [...base(), podReady(12, 1, false), lower(20, 3, 2)], [gate(10, '1')], 'while pod db-1 was not ready'],
    ['a step too soon after the last pod became available', [...base(), podReady(18, 0), lower(20, 3, 2)], [gate(10, '1')], 'ms after the last pod became available'],
    ['two steps at once', [...base(), lower(20, 3, 1)], [gate(10, '1')], 'lowered 3 -> 1, past 2 (more than one step)'],
    ['a step while the pod above is not updated', [...base(), lower(20, 3, 2), lower(30, 2, 1)], [gate(10, '1')], 'at or above the partition was on r1'],
    ['the same partition lowered twice', [...base(), lower(20, 3, 2), podCreate(21, 2, 'r2'), podReady(22, 2), lower(30, 3, 2)], [gate(10, '1')], 'partition 3 lowered twice for revision r2'],
    ['a step by someone else', [...base(), lower(20, 3, 2, 'alice')], [gate(10, '1')], 'someone other than the controller'],
  ] as [string, AuditEvent[], GateChange[], string][])('names %s', (_n, events, g, why) => {
    const r = checkSafety(events, g, opts);
    expect(r.violations.map((v) => v.why)).toEqual([expect.stringContaining(why)]);
    expect(r.violations[0]?.request).toContain('auditID');
  });

  it('with phased-rollout.io/steps, accepts a step to the stage and names a step past it', () => {
    const steps = { ...ANN, 'phased-rollout.io/steps': '1,100%' };
    const withSteps = () => [...base().slice(0, -1), status(5, 'r2', 'r1', steps)];
    // 1,100% on 3 pods: 3 -> 2 (one pod), then 2 -> 0 (the other two at once).
    const ok = checkSafety([...withSteps(), lower(20, 3, 2), podCreate(21, 2, 'r2'), podReady(22, 2), lower(30, 2, 0)], [gate(10, '1')], opts);
    expect(ok).toMatchObject({ gatedSteps: 2, violations: [] });
    const tooFar = checkSafety([...withSteps(), lower(20, 3, 0)], [gate(10, '1')], opts);
    expect(tooFar.violations.map((v) => v.why)).toEqual(['lowered 3 -> 0, past 2 (more than one step)']);
  });

  it('with per-pod and named gates, checks every gate for the pod at the partition', () => {
    const ann = { ...ANN, 'phased-rollout.io/query': 'e2e_gate{name="db-{{ordinal}}"} == 1', 'phased-rollout.io/query.svc': 'e2e_gate{name="db"} == 1' };
    const events = () => [...base().slice(0, -1), status(5, 'r2', 'r1', ann), lower(20, 3, 2), podCreate(21, 2, 'r2'), podReady(22, 2), lower(30, 2, 1)];
    const g = (s: number, name: string, value: string): GateChange => ({ at: at(s), name, value });
    // 3 -> 2 judges db-2 (the first to roll), 2 -> 1 judges db-2 (the one that rolled).
    const ok = checkSafety(events(), [gate(10, '1'), g(10, 'db-2', '1')], opts);
    expect(ok).toMatchObject({ gatedSteps: 2, violations: [] });
    const podFailing = checkSafety(events(), [gate(10, '1'), g(10, 'db-2', '1'), g(27, 'db-2', '0')], opts);
    expect(podFailing.violations.map((v) => v.why)).toEqual(['lowered 2 -> 1 although gate db-2 was not passing throughout the 4000 ms before the step']);
    const svcFailing = checkSafety(events(), [g(10, 'db-2', '1')], opts);
    expect(svcFailing.violations.map((v) => v.why)).toEqual([expect.stringContaining('gate db was not passing'), expect.stringContaining('gate db was not passing')]);
  });

  it('ignores refused writes, raises, reverts and bypasses', () => {
    const refused = checkSafety([...base(), lower(20, 3, 2, CTL, 422)], [], opts);
    expect(refused).toMatchObject({ lowerings: 0, violations: [] });
    const revert = checkSafety([...base(), status(25, 'r1', 'r1'), lower(30, 3, 0)], [], opts);
    expect(revert).toMatchObject({ lowerings: 1, revertsOrBypasses: 1, violations: [] });
    const bypass = checkSafety([...base(), status(25, 'r2', 'r1', { ...ANN, 'phased-rollout.io/standard-rolling-update': 'true' }), lower(30, 3, 0)], [], opts);
    expect(bypass).toMatchObject({ revertsOrBypasses: 1, violations: [] });
  });
});
