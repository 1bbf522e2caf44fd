// The safety checker on crafted audit logs: it accepts a gated rollout and names each kind of unsafe
// step (so it can fail), before it is trusted with real end-to-end runs.
import { checkSafety, gateNamesOf, type AuditEvent, type CheckOptions, type GateChange } from '../support/safety-checker.js';

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
/** sized: the StatefulSet controller's status write after a scale (replicas), with the partition and annotations it saw. */
const sized = (s: number, update: string, current: string, replicas: number, partition?: number, ann: Record<string, string> = ANN) =>
  ev(s, 'update', { resource: 'statefulsets', subresource: 'status', name: 'db' }, { metadata: { annotations: ann }, spec: { replicas, ...(partition !== undefined ? { updateStrategy: { rollingUpdate: { partition } } } : {}) }, status: { updateRevision: update, currentRevision: current } });
const STATUS = 'phased-rollout.io/status';
const statusJson = (s: number, phase: string, revision: string, extra: Record<string, unknown> = {}) => JSON.stringify({ phase, revision, partition: 0, replicas: 3, updated: 3, message: '', since: at(s), ...extra });
/** report: the controller writes its status annotation (a merge patch, as controller/reconcile.ts does). */
const report = (s: number, phase: string, revision: string, extra: Record<string, unknown> = {}) => ev(s, 'patch', { resource: 'statefulsets', name: 'db' }, { metadata: { annotations: { [STATUS]: statusJson(s, phase, revision, extra) } } }, CTL);
/** annotate: a user's merge patch of annotations (kubectl annotate, the plugin); null removes one. */
const annotate = (s: number, annotations: Record<string, string | null>, user = 'alice') => ev(s, 'patch', { resource: 'statefulsets', name: 'db' }, { metadata: { annotations } }, user);

/** base: three pods on r1 ready, then revision r2 pinned; the gate passing from t=10. */
const base = (): AuditEvent[] => [podCreate(0, 0, 'r1'), podCreate(0, 1, 'r1'), podCreate(0, 2, 'r1'), podReady(1, 0), podReady(1, 1), podReady(1, 2), status(5, 'r2', 'r1')];
const opts = { controllerUser: CTL, lagMs: 2500 };

describe('gateNamesOf', () => {
  it('judges the enforced queries only: dry-run ones and comparison gates are left out', () => {
    const ann = { ...ANN, 'phased-rollout.io/query.new': 'e2e_gate{name="cand"} == 1', 'phased-rollout.io/dry-run': 'query.new', 'phased-rollout.io/compare.err': 'e2e_gate{name="err-{{revision}}"}' };
    expect(gateNamesOf(ann, 'db', 2, 3)).toEqual(['db']);
    expect(gateNamesOf({ ...ann, 'phased-rollout.io/dry-run': 'compare.err' }, 'db', 2, 3)).toEqual(['db', 'cand']);
  });
});

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

  it("judges the gates up to a step's prepare hooks: a switchover may fail them after the hook began, never before", () => {
    const hookJob = (t: number, partition: number) => ev(t, 'create', { resource: 'jobs', name: '' }, { metadata: { name: `db-hook-${t}`, annotations: { 'phased-rollout.io/hook': 'prepare', 'phased-rollout.io/partition': String(partition) }, ownerReferences: [{ kind: 'StatefulSet', name: 'db' }] } }, CTL);
    // The gate passes from 10; the hook starts at 19 and its switchover fails the gate at 20; the step at 24.
    const gates = [gate(10, '1'), gate(20, '0')];
    expect(checkSafety([...base(), hookJob(19, 2), lower(24, 3, 2)], gates, opts).violations).toEqual([]);
    // Without the hook's Job in the log the same step stands on a failing gate.
    expect(checkSafety([...base(), lower(24, 3, 2)], gates, opts).violations.map((v) => v.why)).toEqual([expect.stringContaining('gate db was not passing')]);
    // A hook that began before the gates had passed long enough proves nothing.
    expect(checkSafety([...base(), hookJob(11, 2), lower(24, 3, 2)], gates, opts).violations).toHaveLength(1);
    // Another partition's hook is not this step's.
    expect(checkSafety([...base(), hookJob(19, 1), lower(24, 3, 2)], gates, opts).violations).toHaveLength(1);
  });

  it('allows the same partition lowered again when the revision comes back in a later rollout (A -> B -> A -> B)', () => {
    const toB = (t: number) => [lower(t, 3, 2), podCreate(t + 1, 2, 'r2'), podReady(t + 2, 2)];
    // Back to A: the StatefulSet controller puts db-2 back on r1 before B is applied again.
    const events = [...base(), ...toB(20), status(25, 'r1', 'r1'), podCreate(26, 2, 'r1'), podReady(27, 2), status(28, 'r2', 'r1'), ...toB(40)];
    const r = checkSafety(events, [gate(10, '1')], opts);
    expect(r.violations).toEqual([]);
    expect(r.gatedSteps).toBe(2);
  });

  it('allows the same partition lowered again after a scale-up raised it (a raise starts a new epoch)', () => {
    // 3 -> 2 (db-2 on r2); scaled to 4: the controller raises 2 -> 4, db-3 comes up on r1; 4 -> 3 rolls
    // db-3, then 3 -> 1 goes over partition 3 a second time, for db-1 (db-2 is on r2 already).
    const events = [...base(), lower(20, 3, 2), podCreate(21, 2, 'r2'), podReady(22, 2), sized(25, 'r2', 'r1', 4, 2), lower(25.1, 2, 4), podCreate(26, 3, 'r1'), podReady(27, 3), lower(40, 4, 3), podCreate(41, 3, 'r2'), podReady(42, 3), lower(50, 3, 1)];
    const r = checkSafety(events, [gate(10, '1')], opts);
    expect(r.violations).toEqual([]);
    expect(r.gatedSteps).toBe(3);
  });

  describe('a rollout ends only after a passing final check at partition 0, or a rollback', () => {
    /** rolled: every step gated, db-0 on r2 and ready at 42 (partition 0 since 40). */
    const rolled = () => [...base(), lower(20, 3, 2), podCreate(21, 2, 'r2'), podReady(22, 2), lower(30, 2, 1), podCreate(31, 1, 'r2'), podReady(32, 1), lower(40, 1, 0), podCreate(41, 0, 'r2'), podReady(42, 0)];
    const whys = (events: AuditEvent[], g: GateChange[] = [gate(10, '1')]) => checkSafety(events, g, opts).violations.map((v) => v.why);

    it.each([
      ['Completed after the final check', [...rolled(), report(50, 'Completed', 'r2')]],
      ['the re-pin after Completed', [...rolled(), report(50, 'Completed', 'r2'), status(51, 'r2', 'r2'), lower(52, 0, 3)]],
      ['the re-pin and Completed in one write after the final check', [...rolled(), status(44, 'r2', 'r2'), lower(50, 0, 3)]],
      ['Idle after a rollback', [...rolled(), report(43, 'RollingBack', 'r2', { failedRevision: 'r2', failureReason: 'Aborted' }), report(45, 'Idle', 'r2')]],
      ['Completed for a revision applied at 0 replicas, after a final check on the pods back', [...base(), sized(20, 'r1', 'r1', 0, 0), sized(21, 'r2', 'r2', 0, 0), sized(30, 'r2', 'r2', 1, 0), podCreate(30.1, 0, 'r2'), podReady(31, 0), report(40, 'Completed', 'r2')]],
      ['Idle naming another revision than the rollout (a revert)', [...base(), lower(20, 3, 2), podCreate(21, 2, 'r2'), podReady(22, 2), status(25, 'r1', 'r1'), lower(26, 3, 0), report(30, 'Idle', 'r1')]],
    ] as [string, AuditEvent[]][])('accepts %s', (_n, events) => {
      expect(whys(events)).toEqual([]);
    });

    it.each([
      ['Completed as soon as the last pod is ready (the final check skipped)', [...rolled(), report(43, 'Completed', 'r2')], [gate(10, '1')], 'rollout of revision r2 ended (Completed)'],
      ['Completed while the gate fails at partition 0', [...rolled(), report(50, 'Completed', 'r2')], [gate(10, '1'), gate(46, '0')], 'rollout of revision r2 ended (Completed)'],
      ['Completed while the partition is not 0', [...base(), lower(20, 3, 2), podCreate(21, 2, 'r2'), podReady(22, 2), report(40, 'Completed', 'r2')], [gate(10, '1')], 'partition was 2, not 0'],
      ['Idle after a scale to 0 mid-rollout', [...base(), lower(20, 3, 2), podCreate(21, 2, 'r2'), podReady(22, 2), sized(30, 'r2', 'r2', 0, 2), report(31, 'Idle', 'r2')], [gate(10, '1')], 'rollout of revision r2 ended (Idle)'],
      ['a re-pin with no final check', [...rolled(), status(43, 'r2', 'r2'), lower(44, 0, 3)], [gate(10, '1')], 'rollout of revision r2 ended (re-pinned)'],
      ['Idle for a revision applied at 0 replicas (made current with no pod), its pods back unchecked', [...base(), sized(20, 'r1', 'r1', 0, 0), sized(21, 'r2', 'r2', 0, 0), sized(30, 'r2', 'r2', 1, 0), podCreate(30.1, 0, 'r2'), podReady(31, 0), report(31.5, 'Idle', 'r2')], [gate(10, '1')], 'rollout of revision r2 ended (Idle)'],
    ] as [string, AuditEvent[], GateChange[], string][])('names %s', (_n, events, g, why) => {
      expect(whys(events, g)).toEqual([expect.stringContaining(why)]);
    });
  });

  describe('a status write logged before the write it answers (the API server logs a request when its response completes)', () => {
    const rolled = () => [...base(), lower(20, 3, 2), podCreate(21, 2, 'r2'), podReady(22, 2), lower(30, 2, 1), podCreate(31, 1, 'r2'), podReady(32, 1), lower(40, 1, 0), podCreate(41, 0, 'r2'), podReady(42, 0), status(44, 'r2', 'r2')];
    const completed = statusJson(50, 'Completed', 'r2', { gate: 'passing' });
    /** The final check's write: the re-pin and Completed in one JSON Patch, with the resourceVersion it made. */
    const repin = (rv?: string) => {
      const e = lower(50, 0, 3);
      (e.requestObject as unknown[]).push({ op: 'add', path: '/metadata/annotations/phased-rollout.io~1status', value: completed });
      return rv ? { ...e, responseObject: { metadata: { resourceVersion: rv } } } : e;
    };
    /** The StatefulSet controller's answer, based on that resourceVersion, completed 0.1 s earlier. */
    const answer = { ...sized(49.9, 'r2', 'r2', 3, 3, { ...ANN, [STATUS]: completed }) };
    (answer.requestObject as { metadata: Record<string, unknown> }).metadata.resourceVersion = '105';
    const events = (rv?: string) => [...rolled(), answer, repin(rv), report(50.1, 'Completed', 'r2')];

    it('replays the answer after the write it names: the final check at partition 0 ended the rollout', () => {
      expect(checkSafety(events('105'), [gate(10, '1')], opts).violations).toEqual([]);
    });

    it('without the resourceVersion the log order stands, and the end is judged at the re-pinned partition (what the order fixes)', () => {
      expect(checkSafety(events(), [gate(10, '1')], opts).violations.map((v) => v.why)).toEqual([expect.stringContaining('the partition was 3, not 0')]);
    });
  });

  describe('a step no gate passed is allowed only for a promoted inconclusive hold still in force', () => {
    // 3 -> 2 gated; the gate stops passing at 25 (inconclusive checks); the controller holds at 2.
    const HOLD = { partition: 2, replicas: 3, updated: 1, reason: 'Inconclusive' };
    const held = () => [...base(), lower(20, 3, 2), podCreate(21, 2, 'r2'), podReady(22, 2), report(30, 'Paused', 'r2', HOLD)];
    // The StatefulSet controller's writes carry the annotations as they are: the hold's status among them.
    const HELD = { ...ANN, [STATUS]: statusJson(30, 'Paused', 'r2', HOLD) };
    const g = [gate(10, '1'), gate(25, '0')];
    const token = `r2@2@${Math.floor((T0 + 30_000) / 1000)}`;
    const run = (events: AuditEvent[]) => checkSafety(events, g, opts);

    it('accepts the step of a promoted hold, counted as promoted', () => {
      const r = run([...held(), annotate(35, { 'phased-rollout.io/promote': token }), lower(36, 2, 1)]);
      expect(r.violations).toEqual([]);
      expect(r).toMatchObject({ lowerings: 2, gatedSteps: 1, promotedSteps: 1 });
    });

    it('accepts a promotion of a new hold at a new size (a new identity: checks judged the pods at that size)', () => {
      const sized2 = { ...HOLD, replicas: 2 };
      const r = run([...held(), sized(35, 'r2', 'r1', 2, 2, HELD), report(35.5, 'Paused', 'r2', { ...sized2, hold: 1 }), report(38, 'Paused', 'r2', { ...sized2, hold: 2 }), annotate(39, { 'phased-rollout.io/promote': token }), lower(40, 2, 1)]);
      expect(r.violations).toEqual([]);
    });

    it('accepts a step promoted with a pause that was removed before the controller acted on it (no controller can see it)', () => {
      const r = run([...held(), annotate(35, { 'phased-rollout.io/promote': token, 'phased-rollout.io/paused': 'true' }), annotate(35.001, { 'phased-rollout.io/paused': null }), lower(35.01, 2, 1)]);
      expect(r.violations).toEqual([]);
      expect(r.promotedSteps).toBe(1);
    });

    it('accepts Completed after a promoted hold at the final check', () => {
      // Every step after 3 -> 2 promoted: 2 -> 1, 1 -> 0, and the final check at 0.
      const promoted = (t: number, partition: number) => [report(t, 'Paused', 'r2', { ...HOLD, partition }), annotate(t + 1, { 'phased-rollout.io/promote': `r2@${partition}@${Math.floor((T0 + t * 1000) / 1000)}` })];
      const atZero = [...base(), lower(20, 3, 2), podCreate(21, 2, 'r2'), podReady(22, 2), ...promoted(23, 2), lower(24.5, 2, 1), podCreate(25, 1, 'r2'), podReady(26, 1), ...promoted(30, 1), lower(32, 1, 0), podCreate(33, 0, 'r2'), podReady(34, 0), ...promoted(40, 0), report(42, 'Completed', 'r2')];
      const r = checkSafety(atZero, [gate(10, '1'), gate(22.5, '0')], opts);
      expect(r.violations).toEqual([]);
      expect(r.promotedSteps).toBe(2);
    });

    it.each([
      ['no promotion at all', () => [...held(), lower(36, 2, 1)], 'gate db was not passing'],
      ['a promotion written while no inconclusive hold was shown', () => [...base(), lower(20, 3, 2), podCreate(21, 2, 'r2'), podReady(22, 2), report(30, 'Checking', 'r2', { partition: 2 }), annotate(35, { 'phased-rollout.io/promote': token }), lower(36, 2, 1)], 'was written while the status showed Checking of r2 at partition 2'],
      ['a promotion of a hold at another partition', () => [...held(), annotate(35, { 'phased-rollout.io/promote': 'r2@3@1' }), lower(36, 2, 1)], 'gate db was not passing'],
      ['the replicas changed since the promotion', () => [...held(), annotate(35, { 'phased-rollout.io/promote': token }), sized(36, 'r2', 'r1', 2, 2, HELD), report(36.5, 'Paused', 'r2', { ...HOLD, replicas: 2 }), lower(37, 2, 1)], 'the replicas changed'],
      ['a pause written with the promotion', () => [...held(), annotate(35, { 'phased-rollout.io/promote': token, 'phased-rollout.io/paused': 'true' }), report(36, 'Paused', 'r2', { partition: 2 }), annotate(38, { 'phased-rollout.io/paused': null }), report(40, 'Paused', 'r2', HOLD), lower(41, 2, 1)], 'a pause was set'],
      ['a pause between the promotion and the step', () => [...held(), annotate(35, { 'phased-rollout.io/promote': token }), annotate(35.5, { 'phased-rollout.io/paused': 'true' }), report(36, 'Paused', 'r2', { partition: 2 }), annotate(38, { 'phased-rollout.io/paused': null }), lower(41, 2, 1)], 'a pause was set'],
      ['a retry written between the promotion and the step', () => [...held(), annotate(35, { 'phased-rollout.io/promote': token }), annotate(36, { 'phased-rollout.io/retry': `r2@${T0 + 30_000}` }), report(39, 'Paused', 'r2', HOLD), lower(41, 2, 1)], 'a retry was written'],
      ['a promotion of a hold carried over a scale (rewritten at the new size, no check between)', () => [...held(), sized(35, 'r2', 'r1', 2, 2, HELD), report(35.5, 'Paused', 'r2', { ...HOLD, replicas: 2 }), annotate(36, { 'phased-rollout.io/promote': token }), lower(37, 2, 1)], 'carried over a change of replicas'],
      ['a new revision between the promotion and the step', () => [...held(), annotate(35, { 'phased-rollout.io/promote': token }), status(36, 'r3', 'r1', HELD), status(37, 'r2', 'r1', HELD), report(39, 'Paused', 'r2', HOLD), lower(41, 2, 1)], 'the revision changed'],
    ] as [string, () => AuditEvent[], string][])('names a step after %s', (_n, events, why) => {
      const r = run(events());
      expect(r.violations.map((v) => v.why)).toEqual([expect.stringContaining(why)]);
      expect(r.promotedSteps).toBe(0);
    });
  });

  describe('a lowering is judged by the pods it releases, not by a possibly stale view of the revisions', () => {
    // Pods 1 and 2 rolled to r2; the view then (wrongly: a status write missed or out of order) says
    // update = current = r1, and the controller lowers 1 -> 0 with the gate failing; db-0 comes back on r2.
    const rolled = () => [...base(), lower(20, 3, 2), podCreate(21, 2, 'r2'), podReady(22, 2), lower(30, 2, 1), podCreate(31, 1, 'r2'), podReady(32, 1)];
    it('catches a crafted ungated 1 -> 0 behind a view that says update = current', () => {
      const events = [...rolled(), status(35, 'r1', 'r1'), lower(40, 1, 0), podCreate(41, 0, 'r2'), podReady(42, 0)];
      const r = checkSafety(events, [gate(10, '1'), gate(33, 'absent')], opts);
      // Judged as a step, it fails (here on the stale view's own revision; any reason will do).
      expect(r.violations.map((v) => v.why)).toEqual([expect.stringContaining('lowered 1 -> 0')]);
      expect(r.revertsOrBypasses).toBe(0);
    });
    it('a pod created after the partition moved again with no write of its own (the webhook re-pinned a template applied again) was not released by the lowering before', () => {
      // r2 is current (every pod ran it before the final check); an undo to r1 and r2 applied again at
      // once: the controller's revert lowers 3 -> 0, the webhook pins r2 at 3 in the same moment, and the
      // StatefulSet controller creates the new pod on the current revision r2 below that partition.
      // Scaled to 4 meanwhile: db-3 is new.
      const events = [...rolled(), lower(40, 1, 0), podCreate(41, 0, 'r2'), podReady(42, 0), sized(43, 'r2', 'r2', 3, 0), sized(50, 'r1', 'r2', 4, 4), lower(51, 4, 0), sized(52, 'r2', 'r2', 4, 4), podCreate(53, 3, 'r2')];
      const r = checkSafety(events, [gate(10, '1')], opts);
      expect(r.violations.map((v) => v.why)).toEqual([]);
    });

    it('a pod created on an update revision that came after the lowering was not released by it (a revert, then another template at 0 and a scale-up)', () => {
      // A revert lowers 3 -> 0 for r1 (the pods come back on r1); later, at 0 replicas, r2 is applied
      // again and a scale to 1 starts db-0 on r2 before the controller's next partition write.
      const events = [...rolled(), status(35, 'r1', 'r1'), lower(36, 1, 0), podCreate(37, 1, 'r1'), podCreate(38, 2, 'r1'), sized(40, 'r1', 'r1', 0, 0), sized(41, 'r2', 'r1', 0, 0), sized(42, 'r2', 'r1', 1, 0), podCreate(42.1, 0, 'r2'), lower(42.2, 0, 1)];
      const r = checkSafety(events, [gate(10, '1'), gate(33, 'absent')], opts);
      expect(r.violations.map((v) => v.why)).toEqual([]);
    });

    it('a passing final check verifies the revision also when its run took no step of its own (its pods rolled in an earlier run)', () => {
      // r2 rolled to partition 0; r1 and r2 applied again at once (a new run of r2, its pods already on
      // it); the final check passes and Completed; then the StatefulSet controller makes r2 current and
      // the controller reports Completed at the new size: nothing is left open.
      const events = [...rolled(), lower(40, 1, 0), podCreate(41, 0, 'r2'), podReady(42, 0), status(43, 'r1', 'r1'), status(43.5, 'r2', 'r1'), sized(44, 'r2', 'r1', 3, 0), report(50, 'Completed', 'r2'), sized(51, 'r2', 'r2', 3, 3), report(52, 'Completed', 'r2', { partition: 3 })];
      const r = checkSafety(events, [gate(10, '1')], opts);
      expect(r.violations.map((v) => v.why)).toEqual([]);
    });

    it('still counts a real revert (pods go back to the current revision) as a revert, gate failing or not', () => {
      const events = [...rolled(), status(35, 'r1', 'r1'), lower(40, 3, 0), podCreate(41, 2, 'r1'), podCreate(42, 1, 'r1')];
      const r = checkSafety(events, [gate(10, '1'), gate(33, 'absent')], opts);
      expect(r.violations).toEqual([]);
      expect(r.revertsOrBypasses).toBe(1);
    });
    it('counts a rollback after the last step as a revert when the partition is above 0 (pods back to the revision the rollout started from)', () => {
      // r2 rolled to 0 and made current; the partition back at 2 (a scale to 0 and a spec scale-up, the
      // webhook pinning); the failed r2 rolled back: the template of r1 restored, the partition let go.
      const after = [...rolled(), lower(40, 1, 0), podCreate(41, 0, 'r2'), podReady(42, 0), sized(43, 'r2', 'r2', 3, 2), sized(45, 'r1', 'r2', 3, 2), lower(46, 2, 0), podCreate(47, 1, 'r1'), podCreate(48, 0, 'r1')];
      const r = checkSafety(after, [gate(10, '1'), gate(41, '0')], opts);
      expect(r.violations).toEqual([]);
      expect(r.revertsOrBypasses).toBe(1);
      // The same lowering to a revision the rollout did not start from is judged as a step.
      const other = [...rolled(), lower(40, 1, 0), podCreate(41, 0, 'r2'), podReady(42, 0), sized(43, 'r2', 'r2', 3, 2), sized(45, 'r3', 'r2', 3, 2), lower(46, 2, 0), podCreate(47, 1, 'r3'), podCreate(48, 0, 'r3')];
      expect(checkSafety(other, [gate(10, '1'), gate(41, '0')], opts).violations).toHaveLength(1);
    });

    it('counts an undo to the last verified revision as a revert while an unverified one is current (made current at 0 pods)', () => {
      // At 0 replicas r2 was applied and made current with no pod; r3 applied, a pod on it; undone to r1.
      const events = [...base(), sized(20, 'r1', 'r1', 0, 0), sized(21, 'r2', 'r2', 0, 0), sized(22, 'r3', 'r2', 1, 0), podCreate(22.1, 0, 'r3'), sized(23, 'r1', 'r2', 1, 1), lower(24, 1, 0), podCreate(25, 0, 'r1')];
      const r = checkSafety(events, [gate(10, '0')], opts);
      expect(r.violations).toEqual([]);
      expect(r.revertsOrBypasses).toBe(1);
    });

    it('judges a revert that lets a pod go to another revision than the current one', () => {
      const events = [...rolled(), status(35, 'r1', 'r1'), lower(40, 1, 0), podCreate(41, 0, 'r3'), podReady(42, 0)];
      expect(checkSafety(events, [gate(10, '1'), gate(33, 'absent')], opts).violations).toHaveLength(1);
    });
  });

  describe('zone safety in a rollout group', () => {
    const G = { ...ANN, 'phased-rollout.io/group': 'zones' };
    const named = (name: string) => ({
      status: (t: number, update: string, current: string, partition = 3) =>
        ev(t, 'update', { resource: 'statefulsets', subresource: 'status', name }, { metadata: { annotations: { ...G, 'phased-rollout.io/query': `e2e_gate{name="${name}"} == 1` } }, spec: { replicas: 3, updateStrategy: { rollingUpdate: { partition } } }, status: { updateRevision: update, currentRevision: current } }),
      create: (t: number, i: number, rev: string) => ev(t, 'create', { resource: 'pods', name: '' }, { metadata: { name: `${name}-${i}`, labels: { 'controller-revision-hash': rev } } }),
      ready: (t: number, i: number, ready = true) => ev(t, 'patch', { resource: 'pods', subresource: 'status', name: `${name}-${i}` }, { status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: at(t) }] } }),
      remove: (t: number, i: number) => ev(t, 'delete', { resource: 'pods', name: `${name}-${i}` }, { kind: 'DeleteOptions' }),
      lower: (t: number, from: number, to: number) =>
        ev(t, 'patch', { resource: 'statefulsets', name }, [{ op: 'test', path: '/metadata/generation', value: 2 }, { op: 'test', path: '/spec/updateStrategy/rollingUpdate/partition', value: from }, { op: 'replace', path: '/spec/updateStrategy/rollingUpdate/partition', value: to }], CTL),
    });
    const a = named('za');
    const b = named('zb');
    const up = (m: ReturnType<typeof named>, rev: string) => [0, 1, 2].flatMap((i) => [m.create(0, i, rev), m.ready(1, i)]);
    const world = () => [...up(a, 'a1'), ...up(b, 'b1'), b.status(4, 'b1', 'b1'), a.status(5, 'a2', 'a1')];
    const gates = [{ at: at(10), name: 'za', value: '1' }, { at: at(10), name: 'zb', value: '1' }];
    const whys = (events: AuditEvent[]) => checkSafety(events, gates, opts).violations.map((v) => v.why);

    it('accepts a member stepping while every pod of the other is up', () => {
      expect(whys([...world(), a.lower(20, 3, 2)])).toEqual([]);
    });

    it('names a step while a pod of another member is not ready', () => {
      expect(whys([...world(), b.ready(15, 1, false), a.lower(20, 3, 2)])).toEqual(['lowered 3 -> 2: group zones: stepped while pod zb-1 of member zb was down']);
    });

    it('names a step while a pod of another member was deleted and not yet back', () => {
      expect(whys([...world(), b.remove(15, 2), a.lower(20, 3, 2)])).toEqual(['lowered 3 -> 2: group zones: stepped while pod zb-2 of member zb was down']);
    });

    it('does not count a pod that came back within the watch lag, nor one that went down within it', () => {
      const back = [...world(), b.ready(15, 1, false), ev(19.8, 'patch', { resource: 'pods', subresource: 'status', name: 'zb-1' }, { status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: at(19.8) }] } }), a.lower(20, 3, 2)];
      expect(whys(back)).toEqual([]);
      const justDown = [...world(), ev(19.8, 'patch', { resource: 'pods', subresource: 'status', name: 'zb-1' }, { status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: at(19.8) }] } }), a.lower(20, 3, 2)];
      expect(whys(justDown)).toEqual([]);
    });

    it('names two members with a step in flight at once', () => {
      const both = [...world(), b.status(6, 'b2', 'b1'), b.lower(20, 3, 2), a.lower(20.1, 3, 2)];
      expect(whys(both)).toEqual(['lowered 3 -> 2: group zones: stepped while member zb had a step in flight (pod zb-2 not yet on b2)']);
      // Once zb-2 is on b2 and ready, zb is between steps: za may go.
      const after = [...world(), b.status(6, 'b2', 'b1'), b.lower(20, 3, 2), b.remove(20.2, 2), b.create(20.5, 2, 'b2'), b.ready(21, 2), a.lower(30, 3, 2)];
      expect(whys(after)).toEqual([]);
    });
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

describe('member hooks (issue 46 §2.9 and the replacement rule)', () => {
  const JOBS = 'system:serviceaccount:kube-system:job-controller';
  const STS = 'system:serviceaccount:kube-system:statefulset-controller';
  /** hookJob: the controller creates the prepare hook Job `name` for pod db-i at a step to `partition`. */
  const hookJob = (t: number, i: number, partition: number, name: string, hook = 'hook.switchover') =>
    ev(t, 'create', { resource: 'jobs', name: '' }, { metadata: { name, annotations: { 'phased-rollout.io/hook': 'prepare', 'phased-rollout.io/gate': hook, 'phased-rollout.io/partition': String(partition) }, ownerReferences: [{ kind: 'StatefulSet', name: 'db' }] }, spec: { template: { spec: { containers: [{ name: 'hook', env: [{ name: 'PHASED_ROLLOUT_POD', value: `db-${i}` }] }] } } } }, CTL);
  const jobDone = (t: number, name: string, passed = true) => ev(t, 'update', { resource: 'jobs', subresource: 'status', name }, { status: { conditions: [{ type: passed ? 'Complete' : 'Failed', status: 'True' }] } }, JOBS);
  const podDelete = (t: number, i: number, user = STS) => ev(t, 'delete', { resource: 'pods', name: `db-${i}` }, { kind: 'DeleteOptions' }, user);
  /** hooked: the prepare hook Job of db-i (started at t, passed at t+1), the step to i at t+2, db-i replaced on `rev`. */
  const hooked = (t: number, i: number, rev = 'r2', from = i + 1) => [hookJob(t, i, i, `job-${t}`), jobDone(t + 1, `job-${t}`), lower(t + 2, from, i), podDelete(t + 2.5, i), podCreate(t + 3, i, rev), podReady(t + 4, i)];
  const withHooks: CheckOptions = { ...opts, prepareHooks: () => ({ hooks: ['hook.switchover'], sinceMs: 0 }) };
  const whys = (events: AuditEvent[], g: GateChange[] = [gate(10, '1')], o = withHooks) => checkSafety(events, g, o).violations.map((v) => v.why);

  it('a rollback after the last step raises the partition before its revert: no end of the rollout, and its one-pod reverts are no steps', () => {
    // Rolled with hooks; r2 made current; the gate fails at 60; RollingBack and the raise 0 -> 3; the
    // template of r1 restored; the revert restores db-2, db-1, db-0 one at a time after their hooks.
    const rolled = [...base(), ...hooked(15, 2), ...hooked(25, 1), ...hooked(35, 0)];
    const events = [...rolled, status(50, 'r2', 'r2'), report(61, 'RollingBack', 'r2', { failedRevision: 'r2' }), lower(61.5, 0, 3), status(62, 'r1', 'r2'), ...hooked(63, 2, 'r1', 3), ...hooked(70, 1, 'r1', 2), ...hooked(77, 0, 'r1', 1)];
    expect(whys(events, [gate(10, '1'), gate(60, '0')])).toEqual([]);
  });

  it("judges a step's gates from its hooks' start in this attempt, not from an attempt before a pod came back", () => {
    // The first attempt's hook began at 14; db-0 went down at 15 and came back at 16; the gates passed
    // again, the hook ran again at 22 and its switchover failed the gate at 23; the step at 24.
    const events = [...base(), hookJob(14, 2, 2, 'a'), podReady(15, 0, false), podReady(16, 0), hookJob(22, 2, 2, 'b'), jobDone(23, 'b'), lower(24, 3, 2), podDelete(24.5, 2), podCreate(25, 2, 'r2'), podReady(26, 2)];
    expect(whys(events, [gate(10, '1'), gate(23, '0')])).toEqual([]);
  });

  it('accepts a pod replaced after its prepare hook of this attempt passed', () => {
    expect(whys([...base(), ...hooked(15, 2)])).toEqual([]);
  });

  it.each([
    ['no hook at all', [...base(), lower(20, 3, 2), podDelete(20.5, 2), podCreate(21, 2, 'r2')]],
    ['its hook failed', [...base(), hookJob(15, 2, 2, 'j'), jobDone(16, 'j', false), lower(20, 3, 2), podDelete(20.5, 2), podCreate(21, 2, 'r2')]],
    ['its hook still running when the pod went', [...base(), hookJob(15, 2, 2, 'j'), lower(20, 3, 2), podDelete(20.5, 2), jobDone(21, 'j'), podCreate(21.5, 2, 'r2')]],
    ['its hook passed for an earlier rollout of the revision (undone and applied again)', [...base(), hookJob(6, 2, 2, 'j'), jobDone(7, 'j'), status(8, 'r1', 'r1'), status(12, 'r2', 'r1'), lower(20, 3, 2), podDelete(20.5, 2), podCreate(21, 2, 'r2')]],
    ['its hook passed before the pod went down and came back', [...base(), hookJob(12, 2, 2, 'j'), jobDone(13, 'j'), podReady(14, 2, false), podReady(15, 2), lower(20, 3, 2), podDelete(20.5, 2), podCreate(21, 2, 'r2')]],
    ['its hook passed before a pause', [...base(), hookJob(12, 2, 2, 'j'), jobDone(13, 'j'), report(14, 'Paused', 'r2', { partition: 3 }), report(16, 'Checking', 'r2', { partition: 3 }), lower(20, 3, 2), podDelete(20.5, 2), podCreate(21, 2, 'r2')]],
    ["another pod's hook", [...base(), hookJob(15, 1, 2, 'j'), jobDone(16, 'j'), lower(20, 3, 2), podDelete(20.5, 2), podCreate(21, 2, 'r2')]],
  ] as [string, AuditEvent[]][])('names a pod replaced with %s', (_n, events) => {
    expect(whys(events)).toEqual([expect.stringContaining('pod db-2 replaced (r1 -> r2) without its prepare hook hook.switchover of this attempt')]);
  });

  it('names a hook the list gained after the others ran (a policy edit mid-step)', () => {
    const edited = { ...opts, prepareHooks: (_s: string, _a: Record<string, string>, t: number) => (t < T0 + 17_000 ? { hooks: ['hook.switchover'], sinceMs: 0 } : { hooks: ['hook.drain', 'hook.switchover'], sinceMs: T0 + 17_000 }) };
    expect(whys([...base(), ...hooked(15, 2)], [gate(10, '1')], edited)).toEqual([expect.stringContaining('without its prepare hook hook.drain')]);
  });

  it("takes a revert's hook that failed (a revert never stops on one), and leaves a person's delete alone", () => {
    const revert = [...base(), ...hooked(15, 2), status(30, 'r1', 'r1'), report(30.5, 'RollingBack', 'r2', { failedRevision: 'r2' }), hookJob(31, 2, 2, 'r'), jobDone(32, 'r', false), lower(33, 3, 2), podDelete(33.5, 2), podCreate(34, 2, 'r1')];
    expect(whys(revert)).toEqual([]);
    expect(whys([...base(), lower(20, 3, 2), podDelete(20.5, 2, 'alice'), podCreate(21, 2, 'r2')], [gate(10, '1')])).toEqual([]);
  });
});

describe('a StatefulSet created again over its orphaned pods (issue 46 §1)', () => {
  const podDelete = (t: number, i: number) => ev(t, 'delete', { resource: 'pods', name: `db-${i}` }, { kind: 'DeleteOptions' }, 'system:serviceaccount:kube-system:statefulset-controller');
  /** created: the new object's first status: update = current = r2 (a new StatefulSet has no current revision), its 3 pods on r1. */
  const created = (s: number) => ev(s, 'update', { resource: 'statefulsets', subresource: 'status', name: 'db' }, { metadata: { annotations: ANN }, spec: { replicas: 3 }, status: { replicas: 3, updatedReplicas: 0, updateRevision: 'r2', currentRevision: 'r2' } });
  it('names an ungated 3 -> 0 over pods that never ran the "current" revision', () => {
    const events = [...base().slice(0, -1), status(5, 'r1', 'r1'), created(20), lower(21, 3, 0), podDelete(21.5, 2), podCreate(22, 2, 'r2')];
    const r = checkSafety(events, [gate(10, '0')], opts);
    expect(r.violations.map((v) => v.why)).toEqual([expect.stringContaining('lowered 3 -> 0')]);
    expect(r.revertsOrBypasses).toBe(0);
  });
});

describe('checkpoints (issue 47): a member released forward had each claim snapshotted and cut in this attempt, before the partition write', () => {
  const SNAPSHOTTER = 'system:serviceaccount:kube-system:snapshot-controller';
  const STS = 'system:serviceaccount:kube-system:statefulset-controller';
  const snap = (t: number, i: number, name: string, claim = `data-db-${i}`) => ev(t, 'create', { resource: 'volumesnapshots', namespace: 'ns', name: '' }, { metadata: { name }, spec: { source: { persistentVolumeClaimName: claim } } }, CTL);
  const cut = (t: number, name: string) => ev(t, 'update', { resource: 'volumesnapshots', subresource: 'status', namespace: 'ns', name }, { status: { creationTime: at(t), boundVolumeSnapshotContentName: `c-${name}` } }, SNAPSHOTTER);
  const podDelete = (t: number, i: number) => ev(t, 'delete', { resource: 'pods', name: `db-${i}` }, { kind: 'DeleteOptions' }, STS);
  const step = (t: number, i: number) => [lower(t, i + 1, i), podDelete(t + 0.5, i), podCreate(t + 1, i, 'r2'), podReady(t + 2, i)];
  const withCheckpoints: CheckOptions = { ...opts, checkpoints: () => ({ templates: ['data'], sinceMs: 0 }) };
  const whys = (events: AuditEvent[]) => checkSafety(events, [gate(10, '1')], withCheckpoints).violations.map((v) => v.why);

  const uncheckpointed = (i: number, from = i + 1) => `lowered ${from} -> ${i}, releasing pod db-${i} (r1 -> r2), without a checkpoint of claim data-db-${i} in this attempt`;

  it('accepts every step whose member was snapshotted and cut before the partition write', () => {
    expect(whys([...base(), snap(14, 2, 's2'), cut(14.5, 's2'), ...step(15, 2), snap(24, 1, 's1'), cut(24.5, 's1'), ...step(25, 1)])).toEqual([]);
  });

  it.each([
    ['no snapshot at all', [...base(), ...step(15, 2)]],
    ['a snapshot not cut yet when the pod went', [...base(), snap(14, 2, 's2'), ...step(15, 2), cut(16, 's2')]],
    ['a snapshot cut after the partition write, before the pod was deleted', [...base(), snap(14, 2, 's2'), lower(15, 3, 2), cut(15.2, 's2'), podDelete(15.5, 2), podCreate(16, 2, 'r2'), podReady(17, 2)]],
    ['a snapshot created and cut after the partition write, before the pod was deleted', [...base(), lower(15, 3, 2), snap(15.1, 2, 's2'), cut(15.2, 's2'), podDelete(15.5, 2), podCreate(16, 2, 'r2'), podReady(17, 2)]],
    ['no snapshot, the pod not deleted yet (the write released it all the same)', [...base(), lower(15, 3, 2)]],
    ['no snapshot, the pod gone not ready between the write and its deletion', [...base(), lower(15, 3, 2), podReady(15.2, 2, false), podDelete(15.5, 2), podCreate(16, 2, 'r2')]],
    ["another member's snapshot", [...base(), snap(14, 1, 's1'), cut(14.5, 's1'), ...step(15, 2)]],
    ['a snapshot of an earlier attempt (before the pod last became ready)', [...base(), snap(2, 2, 's2'), cut(2.5, 's2'), podReady(3, 2, false), podReady(4, 2), ...step(15, 2)]],
    ['a snapshot created but refused (an error answer)', [...base(), { ...snap(14, 2, 's2'), responseStatus: { code: 403 } }, cut(14.5, 's2'), ...step(15, 2)]],
  ] as [string, AuditEvent[]][])('names a member released with %s', (_n, events) => {
    expect(whys(events)).toEqual([expect.stringContaining(uncheckpointed(2))]);
  });

  it('names the partition write, not the deletion, as the request at fault', () => {
    const events = [...base(), snap(14, 2, 's2'), lower(15, 3, 2), cut(15.2, 's2'), podDelete(15.5, 2), podCreate(16, 2, 'r2')];
    const r = checkSafety(events, [gate(10, '1')], withCheckpoints);
    expect(r.violations.map((v) => v.request)).toEqual([expect.stringMatching(/^patch ns\/db by .*"path":"\/spec\/updateStrategy\/rollingUpdate\/partition","value":2/)]);
  });

  it('judges a member that was not ready when released too: its checkpoint is still owed', () => {
    // db-2 went down at 12 and stayed down; the step at 15 is unsafe on its own, and has no checkpoint either.
    const down = [...base(), podReady(12, 2, false)];
    expect(whys([...down, ...step(15, 2)])).toEqual([expect.stringContaining(uncheckpointed(2)), expect.stringContaining('while pod db-2 was not ready')]);
    // A snapshot cut while it was down is of this attempt; one cut before it went down is not.
    expect(whys([...down, snap(13, 2, 's2'), cut(13.5, 's2'), ...step(15, 2)])).toEqual([expect.stringContaining('while pod db-2 was not ready')]);
    expect(whys([...base(), snap(11, 2, 's2'), cut(11.5, 's2'), podReady(12, 2, false), ...step(15, 2)])).toEqual([expect.stringContaining(uncheckpointed(2)), expect.stringContaining('while pod db-2 was not ready')]);
  });

  it('judges each pod a stage releases: the one without its checkpoint is named', () => {
    // phased-rollout.io/steps 1,100%: db-2 first, then db-1 and db-0 in one write; db-0 was not snapshotted.
    const staged = [...base().slice(0, -1), status(5, 'r2', 'r1', { ...ANN, 'phased-rollout.io/steps': '1,100%' })];
    const events = [...staged, snap(14, 2, 's2'), cut(14.5, 's2'), ...step(15, 2), snap(24, 1, 's1'), cut(24.5, 's1'), lower(25, 2, 0), podDelete(25.5, 1), podCreate(26, 1, 'r2'), podDelete(26.5, 0), podCreate(27, 0, 'r2')];
    expect(whys(events)).toEqual([expect.stringContaining(uncheckpointed(0, 2))]);
  });

  it('a revert takes none: giving back the verified revision needs no checkpoint', () => {
    const events = [...base(), snap(14, 2, 's2'), cut(14.5, 's2'), ...step(15, 2), status(30, 'r1', 'r1'), report(30.5, 'RollingBack', 'r2', { failedRevision: 'r2' }), lower(33, 3, 2), podDelete(33.5, 2), podCreate(34, 2, 'r1')];
    expect(whys(events)).toEqual([]);
  });
});
