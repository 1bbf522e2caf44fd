// The simulated cluster of the exploration: one StatefulSet and its pods as the API server stores them,
// every write audited as kube-apiserver's audit policy of the e2e harness records it (hack/e2e-up.sh),
// spec writes through the webhook's real decide(), and a clock with a queue of timed happenings (the
// kubelet, the StatefulSet controller, the controller's work queue). Nothing here decides a rollout.
import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { decide } from '../../src/admission/decide.js';
import type { AdmissionRequest } from '../../src/admission/review.js';
import type { AuditEvent, GateChange } from '../support/safety-checker.js';

const { applyPatch, deepClone } = fastJsonPatch;

/** CONTROLLER is the controller's user, as the webhook and the safety checker know it. */
export const CONTROLLER = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';
/** STS_CONTROLLER is the StatefulSet controller of kube-controller-manager. */
export const STS_CONTROLLER = 'system:serviceaccount:kube-system:statefulset-controller';
const KUBELET = 'system:node:node-1';
/** JOB_CONTROLLER writes a Job's status when it ends. */
export const JOB_CONTROLLER = 'system:serviceaccount:kube-system:job-controller';
const TTL_CONTROLLER = 'system:serviceaccount:kube-system:ttl-after-finished-controller';

/** HookBehaviour is what a member hook's Job does once started: pass or fail after `ms`, or hang until its deadline. */
export interface HookBehaviour {
  result: 'pass' | 'fail' | 'hang';
  ms: number;
}

/** Job is a hook Job as stored: its run key, who made it (a controller process), and how it ended. */
export interface Job {
  name: string;
  key: string;
  creator: number;
  createdAt: number;
  result?: 'pass' | 'fail';
}

/** Policy is the RolloutGate `pg` the StatefulSet names: its prepare hooks, and since when they stand. */
export interface Policy {
  hooks: string[];
  sinceMs: number;
  /** It has a checkpoint of the claim template `data` (src/checkpoints/spec.ts). */
  checkpoint?: boolean;
}

/** Snapshot is a VolumeSnapshot as stored: its claim, and when it was cut (status.creationTime). */
export interface Snapshot {
  claim: string;
  createdAt: number;
  cutAt?: number;
}

/** SNAPSHOT_CONTROLLER is the snapshot controller's user (it writes a snapshot's status). */
const SNAPSHOT_CONTROLLER = 'system:serviceaccount:kube-system:snapshot-controller';
/** USER is the person (or GitOps tool) acting on the StatefulSet. */
export const USER = 'alice';
/** T0 is the simulation's start (the clock is in ms since the epoch). */
export const T0 = Date.parse('2026-01-01T00:00:00Z');

type Obj = Record<string, any>;

/** Pod is a pod as stored: name, uid, revision label, owner, deletion and the Ready condition. */
export interface Pod {
  metadata: { name: string; namespace: string; uid: string; labels: Record<string, string>; ownerReferences: Obj[]; deletionTimestamp?: string };
  status: { phase: 'Pending' | 'Running'; conditions: { type: 'Ready'; status: 'True' | 'False'; lastTransitionTime: string }[] };
}

/** Outcome is what a write answered: its HTTP code. */
export type Outcome = { code: number; message?: string };

/** fnv1a hashes a template into a revision name, as the StatefulSet controller names ControllerRevisions. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0').slice(0, 6);
}

/** World is the API server's state, the audit log, the gate series and the clock. */
export class World {
  now = T0;
  sts: Obj;
  pods = new Map<number, Pod>();
  readonly audit: AuditEvent[] = [];
  readonly gates: GateChange[] = [];
  /** The outcome every gate check returns now (the series `db` says '1' for pass, else the outcome). */
  gate: 'pass' | 'fail' | 'inconclusive' | 'error' = 'pass';
  gateChangedAtMs = T0;
  /** ControllerRevisions: name -> template (kept, as revisionHistoryLimit keeps the few used here). */
  readonly revisions = new Map<string, Obj>();
  /** What the plugin's promote would have written at each status so far, oldest first (for stale tokens). */
  readonly tokens: string[] = [];
  /** Hook Jobs by name (removed ttlMs after they end), and what a Job started now does. */
  readonly jobs = new Map<string, Job>();
  hook: HookBehaviour = { result: 'pass', ms: 500 };
  /** VolumeSnapshots by name, and what one created now does: cut after ms, or never. */
  readonly snapshots = new Map<string, Snapshot>();
  snapshotBehaviour: { result: 'cut' | 'never'; ms: number } = { result: 'cut', ms: 200 };
  jobTtlMs = 3_600_000;
  /** The RolloutGate's prepare hooks over time (the last one stands); none when the setup has no hooks. */
  readonly policies: Policy[] = [];
  /** The controller's RolloutGate cache cannot tell until then (not listed after a restart, its watch down). */
  policyCacheDownUntil = 0;
  /** How long a gate check takes from now on. */
  checkMs = 250;
  private stsUids = 1;
  private seq = 0;
  private uids = 0;
  private rv = 1;
  private readonly timers: { at: number; seq: number; what: string; fn: () => void }[] = [];
  /** Called after every change of the StatefulSet or a pod (the informers' watch events). */
  onChange: () => void = () => {};

  constructor(annotations: Record<string, string>, replicas: number, image: number) {
    this.sts = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: 'ns', uid: 'sts-1', generation: 1, resourceVersion: '1', annotations: { ...annotations } },
      spec: {
        replicas,
        serviceName: 'db',
        selector: { matchLabels: { app: 'db' } },
        template: templateOf(image),
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: replicas } },
        podManagementPolicy: 'OrderedReady',
        minReadySeconds: 0,
      },
      status: { observedGeneration: 0, replicas: 0 },
    };
    this.revisionOf(this.sts.spec.template);
    this.gates.push({ at: iso(this.now), name: 'db', value: '1' });
  }

  /** revisionOf names a template's revision (a hash: the same template gives the same name back). */
  revisionOf(template: Obj): string {
    const name = `db-${fnv1a(JSON.stringify(template))}`;
    if (!this.revisions.has(name)) this.revisions.set(name, deepClone(template));
    return name;
  }

  // ---- the clock ----

  /** at schedules `fn` at `atMs` (ties run in the order scheduled); `what` names it for a trace. */
  at(atMs: number, what: string, fn: () => void): void {
    this.timers.push({ at: Math.max(atMs, this.now), seq: this.seq++, what, fn });
  }

  /**
   * runUntil runs every happening due by `t` in time order, then sets the clock to `t`; false when
   * `budget` ran out. With `until`, it stops early, right after the first happening that makes it true.
   */
  runUntil(t: number, budget: { steps: number }, until?: () => boolean): boolean {
    if (until?.()) return true;
    for (;;) {
      let next = -1;
      for (let i = 0; i < this.timers.length; i++) {
        const x = this.timers[i]!;
        const best = this.timers[next];
        if (x.at <= t && (!best || x.at < best.at || (x.at === best.at && x.seq < best.seq))) next = i;
      }
      if (next < 0) break;
      if (--budget.steps < 0) return false;
      const [x] = this.timers.splice(next, 1);
      this.now = x!.at;
      x!.fn();
      if (until?.()) return true;
    }
    this.now = Math.max(this.now, t);
    return true;
  }

  /** pending says whether a happening named `what` is scheduled. */
  pending(what: string): boolean {
    return this.timers.some((x) => x.what === what);
  }

  /** cancel drops the scheduled happenings named `what`. */
  cancel(what: string): void {
    for (let i = this.timers.length - 1; i >= 0; i--) if (this.timers[i]!.what === what) this.timers.splice(i, 1);
  }

  // ---- the API server ----

  // Request bodies and StatefulSet objects are never changed once written (every write makes a new
  // object), so the audit keeps them as they are; a pod's status changes in place, so it is copied.
  private record(verb: string, user: string, objectRef: Obj, requestObject: unknown, code: number): void {
    this.audit.push({ verb, stage: 'ResponseComplete', user: { username: user }, objectRef: { namespace: 'ns', ...objectRef }, responseStatus: { code }, requestObject, stageTimestamp: iso(this.now), auditID: `a${this.audit.length + 1}` });
  }

  /**
   * patchStatefulSet applies a merge patch (an object) or a JSON Patch (an array) to the StatefulSet
   * as `user`, through the webhook's decide() as the API server's admission would: 422 on a failed
   * `test`, the webhook's denial as it answers, its pin patch applied; the generation moves with the spec.
   */
  patchStatefulSet(user: string, body: Obj | Operation[]): Outcome {
    const old = this.sts;
    let next: Obj;
    try {
      next = Array.isArray(body) ? applyPatch(deepClone(old), body, true, true).newDocument : mergePatch(deepClone(old), body);
    } catch {
      this.record('patch', user, { resource: 'statefulsets', name: 'db' }, body, 422);
      return { code: 422, message: 'a test op failed' };
    }
    // The API server hands a PATCH to admission with UpdateOptions (patchToUpdateOptions).
    const review: AdmissionRequest = { uid: `r${this.audit.length}`, kind: { group: 'apps', version: 'v1', kind: 'StatefulSet' }, resource: { group: 'apps', version: 'v1', resource: 'statefulsets' }, name: 'db', namespace: 'ns', operation: 'UPDATE', userInfo: { username: user }, object: next, oldObject: old, options: { kind: 'UpdateOptions' } };
    const d = decide(review, { controllerUsernames: new Set([CONTROLLER]) });
    if (d.type === 'deny') {
      this.record('patch', user, { resource: 'statefulsets', name: 'db' }, body, d.code);
      return { code: d.code, message: d.message };
    }
    if (d.type === 'patch') next = applyPatch(next, d.patch as Operation[], false, true).newDocument;
    this.store(next, old);
    this.record('patch', user, { resource: 'statefulsets', name: 'db' }, body, 200);
    this.onChange();
    return { code: 200 };
  }

  /** scale sets spec.replicas through the scale subresource: no webhook (kubectl scale, an autoscaler). */
  scale(replicas: number): void {
    const old = this.sts;
    const next = deepClone(old);
    next.spec.replicas = replicas;
    this.store(next, old);
    this.record('patch', USER, { resource: 'statefulsets', subresource: 'scale', name: 'db' }, { spec: { replicas } }, 200);
    this.onChange();
  }

  /** writeStatus is the StatefulSet controller's status update: the whole object in the request. */
  writeStatus(status: Obj): void {
    this.sts = { ...this.sts, metadata: { ...this.sts.metadata, resourceVersion: String(++this.rv) }, status };
    this.record('update', STS_CONTROLLER, { resource: 'statefulsets', subresource: 'status', name: 'db' }, this.sts, 200);
    this.onChange();
  }

  private store(next: Obj, old: Obj): void {
    if (JSON.stringify(next.spec) !== JSON.stringify(old.spec)) next.metadata.generation = old.metadata.generation + 1;
    next.metadata.resourceVersion = String(++this.rv);
    this.sts = next;
  }

  /** createPod creates pod `ordinal` on `revision`, not ready yet; the kubelet starts it after `startMs`. */
  createPod(ordinal: number, revision: string, startMs: number): void {
    const pod: Pod = {
      metadata: { name: `db-${ordinal}`, namespace: 'ns', uid: `uid-${++this.uids}`, labels: { app: 'db', 'controller-revision-hash': revision }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'sts-1', controller: true }] },
      status: { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: iso(this.now) }] },
    };
    this.pods.set(ordinal, pod);
    this.record('create', STS_CONTROLLER, { resource: 'pods', name: pod.metadata.name }, deepClone(pod), 201);
    const uid = pod.metadata.uid;
    this.at(this.now + startMs, `start ${uid}`, () => this.setReady(ordinal, uid, true));
    this.onChange();
  }

  /**
   * deletePod starts deleting pod `ordinal` (with a uid precondition when given: never a newer pod of
   * the same name); it is gone after `terminationMs`. 404 when absent, 409 when the uid differs.
   */
  deletePod(user: string, ordinal: number, terminationMs: number, uid?: string): Outcome {
    const pod = this.pods.get(ordinal);
    if (!pod) return { code: 404 };
    if (uid !== undefined && pod.metadata.uid !== uid) return { code: 409 };
    if (pod.metadata.deletionTimestamp) return { code: 200 };
    pod.metadata.deletionTimestamp = iso(this.now);
    this.record('delete', user, { resource: 'pods', name: pod.metadata.name }, { kind: 'DeleteOptions', apiVersion: 'v1', ...(uid ? { preconditions: { uid } } : {}) }, 200);
    this.cancel(`start ${pod.metadata.uid}`);
    const gone = pod.metadata.uid;
    this.at(this.now + terminationMs, `gone ${gone}`, () => {
      if (this.pods.get(ordinal)?.metadata.uid !== gone) return;
      this.pods.delete(ordinal);
      this.onChange();
    });
    this.onChange();
    return { code: 200 };
  }

  /** setReady is the kubelet's status write of a pod's Ready condition (its time in whole seconds, as the API stores it). */
  setReady(ordinal: number, uid: string, ready: boolean): void {
    const pod = this.pods.get(ordinal);
    if (!pod || pod.metadata.uid !== uid || pod.metadata.deletionTimestamp) return;
    const was = pod.status.conditions[0]!.status === 'True';
    if (was === ready && pod.status.phase === 'Running') return;
    pod.status = { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: iso(Math.floor(this.now / 1000) * 1000) }] };
    this.record('patch', KUBELET, { resource: 'pods', subresource: 'status', name: pod.metadata.name }, { status: pod.status }, 200);
    this.onChange();
  }

  /**
   * createJob is the controller's creation of a hook Job (the body as controller/jobs.ts writes one: the
   * hook, its partition and pod); it ends as the hook behaves now, and is removed ttlMs after its end.
   */
  createJob(creator: number, run: { key: string; hook: string; pod: string; partition: number; timeoutSeconds: number }): Job {
    const n = [...this.jobs.values()].filter((j) => j.key === run.key).length;
    const job: Job = { name: `db-hook-${fnv1a(run.key)}-${n + this.seq}`, key: run.key, creator, createdAt: this.now };
    this.jobs.set(job.name, job);
    const body = {
      metadata: { name: job.name, annotations: { 'phased-rollout.io/hook': 'prepare', 'phased-rollout.io/gate': run.hook, 'phased-rollout.io/partition': String(run.partition) }, ownerReferences: [{ kind: 'StatefulSet', name: 'db', uid: this.sts.metadata.uid }] },
      spec: { template: { spec: { containers: [{ name: 'hook', env: [{ name: 'PHASED_ROLLOUT_POD', value: run.pod }] }] } } },
    };
    this.record('create', CONTROLLER, { resource: 'jobs', name: job.name }, body, 201);
    const b = this.hook;
    const endAt = b.result === 'hang' ? this.now + run.timeoutSeconds * 1000 : this.now + b.ms;
    this.at(endAt, `job ${job.name}`, () => {
      if (this.jobs.get(job.name) !== job) return;
      job.result = b.result === 'pass' ? 'pass' : 'fail';
      this.record('update', JOB_CONTROLLER, { resource: 'jobs', subresource: 'status', name: job.name }, { status: { conditions: [{ type: job.result === 'pass' ? 'Complete' : 'Failed', status: 'True' }] } }, 200);
      this.at(this.now + this.jobTtlMs, `ttl ${job.name}`, () => {
        if (this.jobs.get(job.name) !== job) return;
        this.jobs.delete(job.name);
        this.record('delete', TTL_CONTROLLER, { resource: 'jobs', name: job.name }, { kind: 'DeleteOptions' }, 200);
      });
    });
    return job;
  }

  /**
   * createSnapshot is the controller's creation of a checkpoint's VolumeSnapshot of one claim (as
   * controller/checkpoints.ts writes it); the snapshot controller cuts it as snapshots behave now.
   */
  createSnapshot(name: string, claim: string): void {
    if (this.snapshots.has(name)) return;
    const snap: Snapshot = { claim, createdAt: this.now };
    this.snapshots.set(name, snap);
    this.record('create', CONTROLLER, { resource: 'volumesnapshots', name }, { metadata: { name, labels: { 'phased-rollout.io/checkpoint': 'true' } }, spec: { source: { persistentVolumeClaimName: claim } } }, 201);
    const b = this.snapshotBehaviour;
    if (b.result === 'never') return;
    this.at(this.now + b.ms, `cut ${name}`, () => {
      snap.cutAt = this.now;
      this.record('update', SNAPSHOT_CONTROLLER, { resource: 'volumesnapshots', subresource: 'status', name }, { status: { creationTime: iso(this.now), readyToUse: true } }, 200);
    });
  }

  /** policyAt is the RolloutGate's hooks at a moment (undefined without hooks). */
  policyAt(atMs: number): Policy | undefined {
    return this.policies.filter((p) => p.sinceMs <= atMs).at(-1);
  }

  /**
   * recreate is `kubectl delete sts db --cascade=orphan` and a `kubectl apply` of the manifest with
   * `template` and its `replicas` (and, as `kubectl get -o yaml` gives it, maybe the old status): a new object with a new
   * UID and no status, through the webhook's review of a CREATE; the pods stay, and the StatefulSet
   * controller adopts them (a new StatefulSet has no current revision: its first status names the
   * update revision current).
   */
  recreate(annotations: Record<string, string>, template: Obj, replicas: number): Outcome {
    const old = this.sts;
    this.record('delete', USER, { resource: 'statefulsets', name: 'db' }, { kind: 'DeleteOptions', propagationPolicy: 'Orphan' }, 200);
    let next: Obj = {
      ...deepClone(old),
      metadata: { name: 'db', namespace: 'ns', uid: `sts-${++this.stsUids}`, generation: 1, resourceVersion: String(++this.rv), annotations: { ...annotations } },
      status: { observedGeneration: 0, replicas: 0 },
    };
    next.spec.template = deepClone(template);
    next.spec.replicas = replicas;
    delete next.spec.updateStrategy.rollingUpdate.partition;
    const review: AdmissionRequest = { uid: `r${this.audit.length}`, kind: { group: 'apps', version: 'v1', kind: 'StatefulSet' }, resource: { group: 'apps', version: 'v1', resource: 'statefulsets' }, name: 'db', namespace: 'ns', operation: 'CREATE', userInfo: { username: USER }, object: next, options: { kind: 'CreateOptions' } };
    const d = decide(review, { controllerUsernames: new Set([CONTROLLER]) });
    if (d.type === 'deny') {
      this.record('create', USER, { resource: 'statefulsets', name: 'db' }, next, d.code);
      return { code: d.code, ...(d.message ? { message: d.message } : {}) };
    }
    if (d.type === 'patch') next = applyPatch(next, d.patch as Operation[], false, true).newDocument;
    this.sts = next;
    this.revisionOf(next.spec.template);
    for (const p of this.pods.values()) p.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: next.metadata.uid, controller: true }];
    this.record('create', USER, { resource: 'statefulsets', name: 'db' }, next, 201);
    this.onChange();
    return { code: 201 };
  }

  /** setGate changes what the checks return from now on, and the gate series with it. */
  setGate(result: World['gate']): void {
    if (result === this.gate) return;
    this.gate = result;
    this.gateChangedAtMs = this.now;
    this.gates.push({ at: iso(this.now), name: 'db', value: result === 'pass' ? '1' : result });
  }
}

/** templateOf is the pod template of image `app:<n>`. */
export function templateOf(image: number): Obj {
  return { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'app', image: `registry.example/app:${image}` }] } };
}

/** iso formats a time of the simulation. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** mergePatch applies an RFC 7386 merge patch (null removes a key). */
function mergePatch(target: Obj, patch: Obj): Obj {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete target[k];
    else if (typeof v === 'object' && !Array.isArray(v) && typeof target[k] === 'object' && target[k] !== null && !Array.isArray(target[k])) target[k] = mergePatch(target[k], v);
    else target[k] = deepClone(v);
  }
  return target;
}
