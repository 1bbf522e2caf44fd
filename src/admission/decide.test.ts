import fastJsonPatch from 'fast-json-patch';
import { KEYS } from '../annotations.js';
import { decide, ROW_SHAPE, ROW_STATUS, ROW_STATUS_SUBRESOURCE, type Decision } from './decide.js';
import { MAX_WARNING_LENGTH } from './messages.js';
import type { AdmissionRequest, KubeObject } from './review.js';

const CONTROLLER = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';
const opts = { controllerUsernames: new Set([CONTROLLER]) };
const ON = { [KEYS.enabled]: 'true', [KEYS.query]: 'up' };

interface StsOpts {
  ann?: Record<string, string>;
  replicas?: number | null;
  image?: string;
  strategy?: unknown;
  partition?: number;
  status?: Record<string, unknown>;
  ordinalsStart?: number;
  deleting?: boolean;
}

function sts(o: StsOpts = {}): KubeObject {
  const spec: KubeObject = {
    selector: { matchLabels: { app: 'db' } },
    template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: o.image ?? 'db:1' }] } },
  };
  if (o.replicas !== null) spec.replicas = o.replicas ?? 3;
  if (o.strategy !== undefined) spec.updateStrategy = o.strategy;
  else if (o.partition !== undefined) spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { partition: o.partition } };
  if (o.ordinalsStart !== undefined) spec.ordinals = { start: o.ordinalsStart };
  const metadata: KubeObject = { name: 'db', namespace: 'prod', annotations: o.ann ?? ON };
  if (o.deleting) metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
  return { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata, spec, ...(o.status ? { status: o.status } : {}) };
}

function req(operation: string, object: unknown, oldObject?: unknown, extra: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    uid: 'u1',
    kind: { group: 'apps', version: 'v1', kind: 'StatefulSet' },
    resource: { group: 'apps', version: 'v1', resource: 'statefulsets' },
    name: 'db',
    namespace: 'prod',
    operation,
    userInfo: { username: 'alice' },
    object,
    oldObject,
    ...extra,
  };
}

/** applied returns the object after the decision's patch (or unchanged when there is none). */
function applied(obj: KubeObject, d: Decision): KubeObject {
  if (d.type !== 'patch') return obj;
  return fastJsonPatch.applyPatch(structuredClone(obj), d.patch, true, false).newDocument;
}

const strategyAfter = (r: AdmissionRequest, d: Decision) => (applied(r.object as KubeObject, d).spec as KubeObject).updateStrategy;

describe('decide: one case per row of SPEC §3', () => {
  it('row 1: not a StatefulSet, DELETE/CONNECT, subresource, deletionTimestamp -> allow, no patch', () => {
    expect(decide(req('CREATE', { kind: 'Deployment' }, undefined, { kind: { group: 'apps', version: 'v1', kind: 'Deployment' } }), opts)).toEqual({ type: 'allow', row: 1, warnings: [] });
    expect(decide(req('DELETE', undefined, sts()), opts)).toMatchObject({ type: 'allow', row: 1 });
    expect(decide(req('CONNECT', undefined), opts)).toMatchObject({ type: 'allow', row: 1 });
    expect(decide(req('UPDATE', { kind: 'Scale' }, { kind: 'Scale' }, { subResource: 'scale' }), opts)).toMatchObject({ type: 'allow', row: 1 });
    expect(decide(req('UPDATE', sts({ deleting: true, partition: 0 }), sts({ partition: 3 })), opts)).toMatchObject({ type: 'allow', row: 1 });
  });

  it('row 2: not opted in -> allow, no patch', () => {
    expect(decide(req('CREATE', sts({ ann: {} })), opts)).toEqual({ type: 'allow', row: 2, warnings: [] });
    expect(decide(req('CREATE', sts({ ann: { [KEYS.enabled]: 'false', [KEYS.periodSeconds]: 'junk' } })), opts)).toMatchObject({ type: 'allow', row: 2, warnings: [] });
  });

  it('row 2: opting out with a pending revision warns that the partition stays', () => {
    const old = sts({ partition: 3, status: { currentRevision: 'db-1', updateRevision: 'db-2' } });
    const d = decide(req('UPDATE', sts({ ann: {}, partition: 3 }), old), opts);
    expect(d).toMatchObject({ type: 'allow', row: 2 });
    expect(d.type === 'allow' && d.warnings).toEqual([expect.stringContaining('partition is left at 3')]);
    // Template change in the same request as the opt-out also counts as pending.
    const d2 = decide(req('UPDATE', sts({ ann: {}, partition: 3, image: 'db:2' }), sts({ partition: 3 })), opts);
    expect(d2.type === 'allow' && d2.warnings.length).toBe(1);
    // Nothing pending: no warning.
    const d3 = decide(req('UPDATE', sts({ ann: {}, partition: 3 }), sts({ partition: 3, status: { currentRevision: 'a', updateRevision: 'a' } })), opts);
    expect(d3).toEqual({ type: 'allow', row: 2, warnings: [] });
  });

  it('row 3: the controller may move the partition', () => {
    const d = decide(req('UPDATE', sts({ partition: 1 }), sts({ partition: 2 }), { userInfo: { username: CONTROLLER } }), opts);
    expect(d).toEqual({ type: 'allow', row: 3, warnings: [] });
    // Compared exactly: a look-alike username is not the controller.
    const d2 = decide(req('UPDATE', sts({ partition: 1 }), sts({ partition: 2 }), { userInfo: { username: `${CONTROLLER}x` } }), opts);
    expect(d2).toMatchObject({ type: 'deny', row: 9 });
  });

  it('row 4: invalid annotations are denied with 422 naming every bad key', () => {
    const d = decide(req('CREATE', sts({ ann: { ...ON, [KEYS.periodSeconds]: '0', [KEYS.paused]: 'yes' } })), opts);
    expect(d).toMatchObject({ type: 'deny', row: 4, code: 422, reason: 'Invalid' });
    if (d.type !== 'deny') throw new Error();
    expect(d.message).toMatch(/^phased-rollout: StatefulSet prod\/db has invalid annotations: /);
    expect(d.message).toContain(`${KEYS.periodSeconds}: "0"`);
    expect(d.message).toContain(`${KEYS.paused}: "yes"`);
  });

  it('row 4: an HTTP gate whose placeholder would choose the host, or a bad respect-pdb, is denied at admission', () => {
    const d = decide(req('CREATE', sts({ ann: { ...ON, 'phased-rollout.io/http.health': 'http://{{pod}}.db.svc/healthz', [KEYS.respectPdb]: 'no' } })), opts);
    expect(d).toMatchObject({ type: 'deny', row: 4, code: 422 });
    if (d.type !== 'deny') throw new Error();
    expect(d.message).toContain('phased-rollout.io/http.health: "http://{{pod}}.db.svc/healthz" (allowed: an http(s) URL: placeholders may stand only in the path or query, after the host)');
    expect(d.message).toContain(`${KEYS.respectPdb}: "no"`);
    const ok = decide(req('CREATE', sts({ ann: { ...ON, 'phased-rollout.io/http.health': 'http://db.svc:8080/healthz?pod={{pod}}' } })), opts);
    expect(ok.type).not.toBe('deny');
  });

  it('row 4: a typo in enabled counts as opted in and invalid', () => {
    const d = decide(req('CREATE', sts({ ann: { [KEYS.enabled]: 'yes', [KEYS.query]: 'up' } })), opts);
    expect(d).toMatchObject({ type: 'deny', row: 4, code: 422 });
    expect(d.type === 'deny' && d.message).toContain(`${KEYS.enabled}: "yes" (allowed: "true" or "false")`);
  });

  it('row 5: OnDelete is denied with 422', () => {
    const d = decide(req('CREATE', sts({ strategy: { type: 'OnDelete' } })), opts);
    expect(d).toMatchObject({ type: 'deny', row: 5, code: 422 });
    expect(d.type === 'deny' && d.message).toBe(
      'phased-rollout: StatefulSet prod/db uses updateStrategy OnDelete, which cannot be gated; use RollingUpdate or remove the phased-rollout.io/enabled annotation',
    );
  });

  it('row 6: standard-rolling-update bypass -> allow, user owns the partition', () => {
    const ann = { ...ON, [KEYS.standardRollingUpdate]: 'true' };
    expect(decide(req('CREATE', sts({ ann })), opts)).toEqual({ type: 'allow', row: 6, warnings: [] });
    expect(decide(req('UPDATE', sts({ ann, partition: 0 }), sts({ ann, partition: 3 })), opts)).toMatchObject({ type: 'allow', row: 6 });
  });

  it('row 7: CREATE pins partition = replicas with a warning', () => {
    const r = req('CREATE', sts({ replicas: 5 }));
    const d = decide(r, opts);
    expect(d).toMatchObject({ type: 'patch', row: 7, warnings: [expect.stringContaining('partition pinned to 5')] });
    expect(strategyAfter(r, d)).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 5 } });
  });

  it('row 8: a template change pins partition = new replicas even over a partition in the request', () => {
    const r = req('UPDATE', sts({ image: 'db:2', partition: 0, replicas: 4 }), sts({ partition: 3 }));
    const d = decide(r, opts);
    expect(d).toMatchObject({ type: 'patch', row: 8, warnings: [expect.stringContaining('partition 4')] });
    expect(strategyAfter(r, d)).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 4 } });
  });

  it('row 8: enabled newly added pins', () => {
    const r = req('UPDATE', sts({ partition: 0 }), sts({ ann: {}, partition: 0 }));
    expect(strategyAfter(r, decide(r, opts))).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 3 } });
    expect(decide(r, opts)).toMatchObject({ row: 8 });
  });

  it('row 8: standard-rolling-update newly turned off pins', () => {
    const old = sts({ ann: { ...ON, [KEYS.standardRollingUpdate]: 'true' }, partition: 0 });
    const r = req('UPDATE', sts({ partition: 0 }), old);
    expect(decide(r, opts)).toMatchObject({ type: 'patch', row: 8 });
  });

  it('row 8: a template change with the partition already pinned sends no patch but still warns', () => {
    const d = decide(req('UPDATE', sts({ image: 'db:2', partition: 3 }), sts({ partition: 3 })), opts);
    expect(d).toMatchObject({ type: 'allow', row: 8, warnings: [expect.stringContaining('partition 3')] });
  });

  it('row 9: a foreign partition edit is denied with 403 and the SPEC text', () => {
    const d = decide(req('UPDATE', sts({ partition: 0 }), sts({ partition: 3 })), opts);
    expect(d).toEqual({
      type: 'deny',
      row: 9,
      code: 403,
      reason: 'Forbidden',
      message:
        'phased-rollout: partition of StatefulSet prod/db is managed by phased-rollout (currently 3); remove it from your manifest, or use phased-rollout.io/paused or phased-rollout.io/standard-rolling-update',
    });
  });

  it('row 9: a PUT whose partition is 0 (the default of an omitted field) is patched back, with a warning', () => {
    const put = { options: { kind: 'UpdateOptions' } };
    const r = req('UPDATE', sts({ partition: 0 }), sts({ partition: 3 }), put);
    const d = decide(r, opts);
    expect(d).toEqual({ type: 'patch', row: 9, patch: [{ op: 'replace', path: '/spec/updateStrategy/rollingUpdate/partition', value: 3 }], warnings: ['phased-rollout: partition is managed by phased-rollout; kept at 3'] });
    expect(strategyAfter(r, d)).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 3 } });
    // A PUT with a non-zero value is an edit: denied.
    expect(decide(req('UPDATE', sts({ partition: 1 }), sts({ partition: 3 }), put), opts)).toMatchObject({ type: 'deny', row: 9, code: 403 });
    // Anything but UpdateOptions is refused. (The real API server reports PATCH and server-side apply
    // with UpdateOptions as well, so in a cluster those get the PUT answer: see docs/interplay.md.)
    expect(decide(req('UPDATE', sts({ partition: 0 }), sts({ partition: 3 }), { options: { kind: 'PatchOptions' } }), opts)).toMatchObject({ type: 'deny', row: 9, code: 403 });
    // A PUT that also scales: the rows for scaling still apply to the kept partition.
    const idleScale = decide(req('UPDATE', sts({ partition: 0, replicas: 5 }), sts({ partition: 3 }), put), opts);
    expect(idleScale).toMatchObject({ type: 'patch', row: 10, warnings: ['phased-rollout: partition is managed by phased-rollout; kept at 5'] });
    const midScale = decide(req('UPDATE', sts({ partition: 0, replicas: 5 }), sts({ partition: 1 }), put), opts);
    expect(midScale).toMatchObject({ type: 'patch', row: 10 });
    expect(midScale.type === 'patch' && midScale.patch).toEqual([{ op: 'replace', path: '/spec/updateStrategy/rollingUpdate/partition', value: 5 }]);
    // A PUT with an unchanged manifest and the partition pinned where it was: nothing to do.
    expect(decide(req('UPDATE', sts({ partition: 3 }), sts({ partition: 3 }), put), opts)).toMatchObject({ type: 'allow', row: 11 });
  });

  it('row 10: scaling an idle StatefulSet through its spec re-pins to the new replicas', () => {
    const up = req('UPDATE', sts({ replicas: 5, partition: 3 }), sts({ replicas: 3, partition: 3 }));
    expect(decide(up, opts)).toMatchObject({ type: 'patch', row: 10, warnings: [] });
    expect(strategyAfter(up, decide(up, opts))).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 5 } });
    // A scale-down keeps the partition where it was: a scale back up through the scale subresource
    // (no webhook) then starts its pods on the current revision.
    const down = req('UPDATE', sts({ replicas: 1, partition: 3 }), sts({ replicas: 3, partition: 3 }));
    expect(strategyAfter(down, decide(down, opts))).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 3 } });
    const templateAfter = req('UPDATE', sts({ replicas: 1, partition: 3, image: 'db:2' }), sts({ replicas: 1, partition: 3 }));
    expect(strategyAfter(templateAfter, decide(templateAfter, opts))).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 3 } });
  });

  it('rows 8 and 10 never pin below the partition there was, nor at 0 below the old replicas (a scale through the scale subresource seen with the template starts its pods on the current revision)', () => {
    const toZero = req('UPDATE', sts({ replicas: 0, partition: 3 }), sts({ replicas: 3, partition: 3 }));
    expect(strategyAfter(toZero, decide(toZero, opts))).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 3 } });
    const templateAtZero = req('UPDATE', sts({ replicas: 0, partition: 3, image: 'db:2' }), sts({ replicas: 0, partition: 3 }));
    expect(strategyAfter(templateAtZero, decide(templateAtZero, opts))).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 3 } });
    // Pinned at 0 by an earlier release: the old replicas count.
    const both = req('UPDATE', sts({ replicas: 0, partition: 0, image: 'db:2' }), sts({ replicas: 2, partition: 0 }));
    expect(strategyAfter(both, decide(both, opts))).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 2 } });
    // Our own pin seen again is no foreign edit; scaled up from 0 through the spec: the new size, or
    // the partition there was if that is higher.
    expect(decide(req('UPDATE', sts({ replicas: 0, partition: 3 }), sts({ replicas: 3, partition: 3 })), opts).type).not.toBe('deny');
    const up = req('UPDATE', sts({ replicas: 2, partition: 3 }), sts({ replicas: 0, partition: 3 }));
    expect(strategyAfter(up, decide(up, opts))).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 3 } });
    const upMore = req('UPDATE', sts({ replicas: 5, partition: 3 }), sts({ replicas: 0, partition: 3 }));
    expect(strategyAfter(upMore, decide(upMore, opts))).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 5 } });
    // Scaled 3 -> 0 through the subresource a moment before (no trace but the controller's status): the
    // replicas it last pinned for count too.
    const recorded = { ...ON, [KEYS.status]: JSON.stringify({ phase: 'Paused', revision: 'r1', partition: 1, replicas: 3, updated: 3, message: '', since: '' }) };
    const afterScale = req('UPDATE', sts({ ann: recorded, replicas: 0, partition: 1, image: 'db:2' }), sts({ ann: recorded, replicas: 0, partition: 1 }));
    expect(strategyAfter(afterScale, decide(afterScale, opts))).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 3 } });
  });

  it('row 10 (extended): scaling up mid-rollout pins to the new size so new pods start on the current revision (issue 11 item 8)', () => {
    const up = req('UPDATE', sts({ replicas: 5, partition: 1 }), sts({ replicas: 3, partition: 1 }));
    const d = decide(up, opts);
    expect(d).toMatchObject({ type: 'patch', row: 10, warnings: [expect.stringContaining('partition raised to 5')] });
    expect(strategyAfter(up, d)).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 5 } });
  });

  it('rows 10 are idempotent: the API server re-invoking the webhook with our own scale pin gets no denial (found by the property test)', () => {
    for (const [old, pinned] of [
      [sts({ replicas: 3, partition: 3 }), sts({ replicas: 5, partition: 5 })], // idle scale
      [sts({ replicas: 3, partition: 1 }), sts({ replicas: 5, partition: 5 })], // scale up mid-rollout
    ]) {
      expect(decide(req('UPDATE', pinned, old), opts)).toMatchObject({ type: 'allow' });
    }
  });

  it('a StatefulSet without spec is refused with 400, never answered with a patch that cannot apply', () => {
    const noSpec = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db', namespace: 'prod', annotations: ON } };
    expect(decide(req('CREATE', noSpec), opts)).toMatchObject({ type: 'deny', code: 400, message: expect.stringContaining('spec is missing') });
  });

  it('with --allowed-prometheus-urls, a prometheus-url outside the list is denied 422 naming the list', () => {
    const allowed = { ...opts, allowedPrometheusUrls: ['http://prometheus.monitoring:9090'] };
    const evil = { ...ON, [KEYS.prometheusUrl]: 'http://169.254.169.254/latest' };
    const d = decide(req('CREATE', sts({ ann: evil })), allowed);
    expect(d).toMatchObject({ type: 'deny', row: 4, code: 422 });
    expect(d.type === 'deny' && d.message).toContain('phased-rollout.io/prometheus-url: "http://169.254.169.254/latest" (allowed: a URL under one of the controller\'s --allowed-prometheus-urls: http://prometheus.monitoring:9090)');
    expect(decide(req('CREATE', sts({ ann: { ...ON, [KEYS.prometheusUrl]: 'http://prometheus.monitoring:9090' } })), allowed)).toMatchObject({ type: 'patch', row: 7 });
    // No list: any well-formed URL.
    expect(decide(req('CREATE', sts({ ann: evil })), opts)).toMatchObject({ type: 'patch', row: 7 });
  });

  it('the status annotation is the controller\'s: edits and forged additions are denied 403 (issue 11 item 11)', () => {
    const status = (phase: string) => ({ ...ON, [KEYS.status]: JSON.stringify({ phase }) });
    const edit = decide(req('UPDATE', sts({ ann: status('Completed'), partition: 2 }), sts({ ann: status('Checking'), partition: 2 })), opts);
    expect(edit).toMatchObject({ type: 'deny', row: ROW_STATUS, code: 403, message: expect.stringContaining('phased-rollout: annotation phased-rollout.io/status of StatefulSet prod/db is written by the phased-rollout controller only') });
    expect(decide(req('UPDATE', sts({ ann: status('Failed'), partition: 2 }), sts({ partition: 2 })), opts)).toMatchObject({ type: 'deny', row: ROW_STATUS });
    expect(decide(req('CREATE', sts({ ann: status('Idle') })), opts)).toMatchObject({ type: 'deny', row: ROW_STATUS });
    // An unchanged value passes.
    expect(decide(req('UPDATE', sts({ ann: { ...status('Checking'), [KEYS.paused]: 'true' }, partition: 2 }), sts({ ann: status('Checking'), partition: 2 })), opts)).toMatchObject({ type: 'allow', row: 11 });
    // The controller writes it.
    expect(decide(req('UPDATE', sts({ ann: status('Completed'), partition: 2 }), sts({ ann: status('Checking'), partition: 2 }), { userInfo: { username: CONTROLLER } }), opts)).toMatchObject({ type: 'allow', row: 3 });
  });

  it('a write that drops the status gets it back, with a warning: it is the record of where the rollout started (issue 36)', () => {
    const st = JSON.stringify({ phase: 'Failed', revision: 'r2', previousRevision: 'r1', replicas: 3 });
    const was = sts({ ann: { ...ON, [KEYS.status]: st }, partition: 2 });
    const keptOp = { op: 'add', path: '/metadata/annotations/phased-rollout.io~1status', value: st };
    // A user's removal (the retry of earlier releases).
    const removed = decide(req('UPDATE', sts({ ann: ON, partition: 2 }), was), opts);
    expect(removed).toMatchObject({ type: 'patch', row: 11, patch: [keptOp] });
    expect(removed.type !== 'deny' && removed.warnings.join('\n')).toContain('phased-rollout: phased-rollout.io/status kept (the controller\'s record); to retry: kubectl phased-rollout retry');
    // A PUT of a manifest with a new template (no status, no partition): the pin and the status both.
    const bare = sts({ partition: 0, image: 'app:3' });
    const put2 = decide(req('UPDATE', bare, was, { options: { kind: 'UpdateOptions' } }), opts);
    expect(put2).toMatchObject({ type: 'patch', row: 8 });
    expect(put2.type === 'patch' && put2.patch).toEqual(expect.arrayContaining([keptOp, expect.objectContaining({ path: '/spec/updateStrategy/rollingUpdate/partition', value: 3 })]));
    // Opting out removes it (the controller would), the controller removes it, a denial stays a denial.
    expect(decide(req('UPDATE', sts({ ann: { [KEYS.enabled]: 'false' }, partition: 2 }), was), opts)).toMatchObject({ type: 'allow', row: 2 });
    expect(decide(req('UPDATE', sts({ ann: ON, partition: 2 }), was, { userInfo: { username: CONTROLLER } }), opts)).toMatchObject({ type: 'allow', row: 3 });
    expect(decide(req('UPDATE', sts({ ann: ON, partition: 1 }), was), opts)).toMatchObject({ type: 'deny', row: 9 });
  });

  it('a status forged while opted out cannot be kept through an opt-in (security review item 7)', () => {
    const forged = JSON.stringify({ phase: 'Paused', revision: 'r', promotion: 1 });
    const off = { [KEYS.enabled]: 'false', [KEYS.query]: 'up', [KEYS.status]: forged };
    // Opted out, anyone may write it (row 2)...
    expect(decide(req('UPDATE', sts({ ann: off, partition: 3 }), sts({ ann: { [KEYS.enabled]: 'false', [KEYS.query]: 'up' }, partition: 3 })), opts)).toMatchObject({ type: 'allow', row: 2 });
    // ...but opting back in with it is denied, and says what to do.
    const back = decide(req('UPDATE', sts({ ann: { ...ON, [KEYS.status]: forged }, partition: 3 }), sts({ ann: off, partition: 3 })), opts);
    expect(back).toMatchObject({ type: 'deny', row: ROW_STATUS, code: 403, message: expect.stringContaining('is being opted in with annotation phased-rollout.io/status already set') });
    // Opting in without it is fine.
    expect(decide(req('UPDATE', sts({ ann: ON, partition: 3 }), sts({ ann: off, partition: 3 })), opts)).toMatchObject({ type: 'allow', row: 8 });
  });

  it('row 11: anything else -> allow, no patch', () => {
    // Scaling down mid-rollout (old partition < old replicas) creates no pod: nothing to hold.
    expect(decide(req('UPDATE', sts({ replicas: 2, partition: 1 }), sts({ replicas: 3, partition: 1 })), opts)).toEqual({ type: 'allow', row: 11, warnings: [] });
    // An annotation-only change, e.g. pausing.
    const paused = { ...ON, [KEYS.paused]: 'true' };
    expect(decide(req('UPDATE', sts({ ann: paused, partition: 2 }), sts({ partition: 2 })), opts)).toMatchObject({ type: 'allow', row: 11 });
  });
});

describe('decide: the status subresource', () => {
  // What `kubectl patch sts db --subresource=status` sends: the API server's status strategy resets
  // only .spec, so metadata in such a request is stored.
  const statusReq = (object: KubeObject, oldObject: KubeObject, extra: Partial<AdmissionRequest> = {}) => req('UPDATE', object, oldObject, { subResource: 'status', ...extra });
  const forged = JSON.stringify({ phase: 'RollingBack', revision: 'db-2', failedRevision: 'db-1', previousRevision: 'db-2' });
  const current = JSON.stringify({ phase: 'Checking', revision: 'db-2' });
  const KUBE_STS_CONTROLLER = 'system:serviceaccount:kube-system:statefulset-controller';

  it('a forged status annotation sent to /status is denied 403 for anyone but the controller, saying what to do', () => {
    const d = decide(statusReq(sts({ ann: { ...ON, [KEYS.status]: forged }, partition: 3 }), sts({ ann: { ...ON, [KEYS.status]: current }, partition: 3 })), opts);
    expect(d).toMatchObject({ type: 'deny', row: ROW_STATUS_SUBRESOURCE, code: 403, reason: 'Forbidden' });
    expect(d.type === 'deny' && d.message).toBe(
      'phased-rollout: annotation phased-rollout.io/status of StatefulSet prod/db cannot be changed through the status subresource; ' +
        'phased-rollout.io/ annotations are set on the StatefulSet itself (kubectl annotate, or kubectl patch without --subresource), where they are checked',
    );
    // Added where there was none, and by a user holding a wildcard role: the same.
    expect(decide(statusReq(sts({ ann: { ...ON, [KEYS.status]: forged }, partition: 3 }), sts({ partition: 3 }), { userInfo: { username: 'system:serviceaccount:gitops:argocd' } }), opts)).toMatchObject({ type: 'deny', row: ROW_STATUS_SUBRESOURCE, code: 403 });
    // Even the StatefulSet controller's identity may not change them (it never does).
    expect(decide(statusReq(sts({ ann: { ...ON, [KEYS.status]: forged }, partition: 3 }), sts({ partition: 3 }), { userInfo: { username: KUBE_STS_CONTROLLER } }), opts)).toMatchObject({ type: 'deny', row: ROW_STATUS_SUBRESOURCE });
  });

  it('any change of a phased-rollout.io/ annotation through /status is denied: an edit, an addition, a removal', () => {
    const base = { ...ON, [KEYS.status]: current };
    const cases: [string, Record<string, string>, Record<string, string>][] = [
      ['edit of paused', { ...base, [KEYS.paused]: 'false' }, { ...base, [KEYS.paused]: 'true' }],
      ['addition of a promotion', base, { ...base, [KEYS.promote]: 'x' }],
      ['removal of the status', base, ON],
      ['removal of the opt-in', base, { [KEYS.query]: 'up', [KEYS.status]: current }],
      ['an opt-in added where there was none', {}, { [KEYS.enabled]: 'true', [KEYS.status]: forged }],
      ['opted out, a status added', { [KEYS.enabled]: 'false' }, { [KEYS.enabled]: 'false', [KEYS.status]: forged }],
      ['an unknown key under the prefix', base, { ...base, 'phased-rollout.io/anything': '1' }],
    ];
    for (const [what, before, after] of cases) {
      const d = decide(statusReq(sts({ ann: after, partition: 3 }), sts({ ann: before, partition: 3 })), opts);
      expect({ what, d }).toMatchObject({ what, d: { type: 'deny', row: ROW_STATUS_SUBRESOURCE, code: 403 } });
    }
    // The message names every changed key.
    const two = decide(statusReq(sts({ ann: { ...base, [KEYS.paused]: 'true' }, partition: 3 }), sts({ ann: ON, partition: 3 })), opts);
    expect(two.type === 'deny' && two.message).toContain(`annotations ${KEYS.paused}, ${KEYS.status} of StatefulSet prod/db cannot be changed through the status subresource`);
  });

  it('the StatefulSet controller\'s status writes (the whole object, our annotations unchanged) are allowed at once, with no patch', () => {
    const ann = { ...ON, [KEYS.status]: current, 'other.io/x': 'y' };
    const old = sts({ ann, partition: 3, status: { replicas: 3, readyReplicas: 2 } });
    const obj = sts({ ann, partition: 3, status: { replicas: 3, readyReplicas: 3 } });
    expect(decide(statusReq(obj, old, { userInfo: { username: KUBE_STS_CONTROLLER } }), opts)).toEqual({ type: 'allow', row: 1, warnings: [] });
    // Other annotations and the spec (which the API server resets) are not this rule's concern.
    expect(decide(statusReq(sts({ ann: { ...ann, 'other.io/x': 'z' }, partition: 0 }), old), opts)).toEqual({ type: 'allow', row: 1, warnings: [] });
    // Not opted in, unannotated: nothing of ours changes.
    expect(decide(statusReq(sts({ ann: {} }), sts({ ann: {} })), opts)).toEqual({ type: 'allow', row: 1, warnings: [] });
    // Annotations in another order are the same annotations.
    const reordered = Object.fromEntries(Object.entries(ann).reverse());
    expect(decide(statusReq(sts({ ann: reordered, partition: 3 }), old), opts)).toEqual({ type: 'allow', row: 1, warnings: [] });
  });

  it('the controller may change its annotations through /status', () => {
    const d = decide(statusReq(sts({ ann: { ...ON, [KEYS.status]: forged }, partition: 3 }), sts({ ann: { ...ON, [KEYS.status]: current }, partition: 3 }), { userInfo: { username: CONTROLLER } }), opts);
    expect(d).toEqual({ type: 'allow', row: 3, warnings: [] });
  });

  it('a status write without object or oldObject is refused with 400, not allowed', () => {
    expect(decide(req('UPDATE', undefined, sts(), { subResource: 'status' }), opts)).toMatchObject({ type: 'deny', row: ROW_SHAPE, code: 400 });
    expect(decide(req('UPDATE', sts(), undefined, { subResource: 'status' }), opts)).toMatchObject({ type: 'deny', row: ROW_SHAPE, code: 400 });
  });

  it('other subresources (scale) stay row 1', () => {
    expect(decide(req('UPDATE', { kind: 'Scale' }, { kind: 'Scale' }, { subResource: 'scale', kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' } }), opts)).toMatchObject({ type: 'allow', row: 1 });
  });
});

describe('decide: object shapes', () => {
  it('adds the rollingUpdate block when absent, keeping other strategy fields', () => {
    const r = req('CREATE', sts({ strategy: { type: 'RollingUpdate' } }));
    const d = decide(r, opts);
    expect(d.type === 'patch' && d.patch).toEqual([{ op: 'add', path: '/spec/updateStrategy/rollingUpdate', value: { partition: 3 } }]);
    const r2 = req('CREATE', sts({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } } }));
    expect(strategyAfter(r2, decide(r2, opts))).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2, partition: 3 } });
  });

  it('adds updateStrategy when absent', () => {
    const r = req('CREATE', sts());
    const d = decide(r, opts);
    expect(d.type === 'patch' && d.patch).toEqual([{ op: 'add', path: '/spec/updateStrategy', value: { type: 'RollingUpdate', rollingUpdate: { partition: 3 } } }]);
  });

  it('defaults replicas to 1 when absent', () => {
    const r = req('CREATE', sts({ replicas: null }));
    expect(strategyAfter(r, decide(r, opts))).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 1 } });
  });

  it('pins to replicas whatever ordinals.start is (partition counts pods from the first ordinal)', () => {
    const r = req('CREATE', sts({ ordinalsStart: 10, replicas: 3 }));
    expect(strategyAfter(r, decide(r, opts))).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 3 } });
  });

  it('sends no patch when the partition is already right', () => {
    expect(decide(req('CREATE', sts({ partition: 3 })), opts)).toMatchObject({ type: 'allow', row: 7 });
  });

  it('overrides a user partition on CREATE', () => {
    const r = req('CREATE', sts({ partition: 0 }));
    const d = decide(r, opts);
    expect(d.type === 'patch' && d.patch).toEqual([{ op: 'replace', path: '/spec/updateStrategy/rollingUpdate/partition', value: 3 }]);
  });

  it('answers the same on dryRun', () => {
    const a = decide(req('CREATE', sts()), opts);
    expect(decide(req('CREATE', sts(), undefined, { dryRun: true }), opts)).toEqual(a);
  });

  it('patches only spec.updateStrategy, and escapes nothing by hand', () => {
    const o = sts({ ann: { ...ON, 'example.com/a~b': 'x' } });
    const d = decide(req('CREATE', o), opts);
    if (d.type !== 'patch') throw new Error('expected a patch');
    for (const op of d.patch) expect(op.path.startsWith('/spec/updateStrategy')).toBe(true);
  });

  it.each([
    ['spec is not an object', { ...sts(), spec: 'x' }],
    ['replicas is negative', sts({ replicas: -1 })],
    ['replicas is a string', { ...sts(), spec: { ...(sts().spec as object), replicas: '3' } }],
    ['updateStrategy is a string', sts({ strategy: 'RollingUpdate' })],
    ['rollingUpdate is an array', sts({ strategy: { type: 'RollingUpdate', rollingUpdate: [] } })],
    ['partition is fractional', sts({ strategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1.5 } } })],
    ['type is a number', sts({ strategy: { type: 7 } })],
  ])('denies a surprising object (%s) with 400 and a message, never throws', (_why, object) => {
    const d = decide(req('CREATE', object), opts);
    expect(d).toMatchObject({ type: 'deny', row: ROW_SHAPE, code: 400 });
    expect(d.type === 'deny' && d.message).toMatch(/^phased-rollout: StatefulSet prod\/db cannot be admitted: /);
  });

  it('denies a request without object or oldObject', () => {
    expect(decide(req('CREATE', undefined), opts)).toMatchObject({ type: 'deny', code: 400 });
    expect(decide(req('UPDATE', sts(), undefined), opts)).toMatchObject({ type: 'deny', code: 400 });
    expect(decide(req('CREATE', [1, 2]), opts)).toMatchObject({ type: 'deny', code: 400 });
  });

  it('names a generateName object by its prefix', () => {
    const o = sts({ ann: { [KEYS.enabled]: 'bad' } });
    (o.metadata as KubeObject).name = undefined;
    (o.metadata as KubeObject).generateName = 'db-';
    const d = decide(req('CREATE', o, undefined, { name: '' }), opts);
    expect(d.type === 'deny' && d.message).toContain('StatefulSet prod/db-* has invalid');
  });

  it('keeps every warning within the API server limit, even for huge replica counts', () => {
    const big = 2147483647;
    const cases = [
      decide(req('CREATE', sts({ replicas: big })), opts),
      decide(req('UPDATE', sts({ replicas: big, image: 'x' }), sts({ replicas: big })), opts),
      decide(req('UPDATE', sts({ ann: {}, partition: big }), sts({ partition: big, status: { currentRevision: 'a', updateRevision: 'b' } })), opts),
    ];
    for (const d of cases) {
      expect(d.type === 'deny' ? [] : d.warnings).toHaveLength(1);
      for (const w of d.type === 'deny' ? [] : d.warnings) expect(w.length).toBeLessThanOrEqual(MAX_WARNING_LENGTH);
    }
  });
});
