// Job gates: a Kubernetes Job, from a template in a gate policy, run in the StatefulSet's namespace as a
// check (a smoke test, `etcdctl endpoint health --cluster`, a data verification). The Job succeeds: the
// gate passes; it fails: the gate fails; it cannot be created or runs past its timeout: the gate could
// not be evaluated (error). All the decisions are here, pure; controller/jobs.ts lists, creates, labels
// and deletes.
//
// What a Job judges lives on the Job (labels, annotations, owner): a restarted controller (or a new
// leader) finds the Job its predecessor started and waits for it, and two controllers racing pick the
// same deterministic name, so the API server lets only one create it. Whose Job it is does not: anyone
// who may create Jobs in the namespace can write those, so only a Job this process created (its UID
// recorded, src/jobs/created.ts) gives an outcome. Another is waited for and then run again.
import { createHash } from 'node:crypto';
import type { NamedVerdict } from '../rollout/gates.js';
import type { Verdict } from '../rollout/types.js';
import type { JobCheck } from './template.js';

export type { JobCheck, JobGateTemplate, JobRuns, JobTemplate } from './template.js';

/** Where a check Job is from: label, annotations and limits every Job of the controller carries. */
export const JOB_LABEL = 'phased-rollout.io/statefulset';
export const JOB_GATE = 'phased-rollout.io/gate';
export const JOB_REVISION = 'phased-rollout.io/revision';
export const JOB_PARTITION = 'phased-rollout.io/partition';
export const JOB_RUN = 'phased-rollout.io/run';
/** On a member hook's Job: `prepare` or `settle` (src/rollout/hooks.ts); a gate's Job has none. */
export const JOB_HOOK = 'phased-rollout.io/hook';
/** On a Job of an Argo job metric (controller/argo.ts): decided apart from the Job gates', per metric. */
export const JOB_ANALYSIS = 'phased-rollout.io/analysis-metric';
/**
 * What the step's Job judged: the pods as they were (each one's UID and Ready time) and the gate as
 * written. A pod that went down or was replaced, a retry after a rollback, an edited template: another
 * key, so an old pass never stands for them.
 */
export const JOB_KEY = 'phased-rollout.io/step-key';
/** Set on a Job once its outcome was counted (a per-check Job, or one that did not pass): a later check runs a new one. */
export const JOB_CHECKED = 'phased-rollout.io/checked';
/** Kept for inspection this long after it finished, unless the template says otherwise. */
export const DEFAULT_JOB_TTL_SECONDS = 3600;
/**
 * A Job with no outcome this long after its own deadline is stuck (a pod that never terminates on a
 * lost node, a deletion held by a finalizer): the check is an error and the Job no longer blocks.
 */
export const STUCK_GRACE_SECONDS = 120;

/** JobView is what the decisions need of a Job. */
export interface JobView {
  name: string;
  uid: string;
  gate: string;
  revision: string;
  partition: number;
  run: number;
  key: string;
  checked: boolean;
  /** A member hook's Job, not a gate's. */
  hook: boolean;
  /** An Argo job metric's Job, not a Job gate's. */
  analysis?: true;
  /** Created by this process (its UID recorded): only such a Job's outcome counts. */
  ours: boolean;
  deleting: boolean;
  /** When the API server created it, and its activeDeadlineSeconds. */
  createdMs: number;
  deadlineSeconds: number;
  resourceVersion: string;
  /** Undefined while it runs. */
  outcome?: Verdict;
}

/** Owner is the StatefulSet the Jobs belong to. */
export interface Owner {
  namespace: string;
  name: string;
  uid: string;
}

/**
 * jobView reads one Job (as the API returns it) for the decisions; undefined for a Job of another
 * StatefulSet or without the step's annotations. `created`: the UIDs of the Jobs this process created.
 */
export function jobView(job: { metadata?: Record<string, any>; spec?: Record<string, any>; status?: Record<string, any> }, owner: Owner, created: ReadonlySet<string> = new Set()): JobView | undefined {
  const m = job.metadata ?? {};
  if (!(m.ownerReferences ?? []).some((r: { uid?: string }) => r.uid === owner.uid)) return undefined;
  const a = m.annotations ?? {};
  const gate = a[JOB_GATE];
  const partition = Number(a[JOB_PARTITION]);
  if (typeof gate !== 'string' || typeof a[JOB_REVISION] !== 'string' || !Number.isInteger(partition)) return undefined;
  const outcome = outcomeOf(m.name ?? '', m.namespace ?? owner.namespace, job.status ?? {});
  return {
    name: m.name ?? '',
    uid: m.uid ?? '',
    gate,
    revision: a[JOB_REVISION],
    partition,
    run: Number(a[JOB_RUN]) || 0,
    key: typeof a[JOB_KEY] === 'string' ? a[JOB_KEY] : '',
    checked: m.labels?.[JOB_CHECKED] === 'true',
    hook: typeof a[JOB_HOOK] === 'string',
    ...(a[JOB_ANALYSIS] === 'true' ? { analysis: true as const } : {}),
    ours: created.has(m.uid ?? ''),
    deleting: Boolean(m.deletionTimestamp),
    createdMs: Date.parse(m.creationTimestamp ?? '') || 0,
    deadlineSeconds: Number(job.spec?.activeDeadlineSeconds) || 0,
    resourceVersion: m.resourceVersion ?? '',
    ...(outcome ? { outcome } : {}),
  };
}

/**
 * outcomeOf reads a Job's terminal condition (Complete or Failed; the interim SuccessCriteriaMet and
 * FailureTarget wait for the pods to stop). DeadlineExceeded is the timeout: the check could not be
 * made, which is not the same as the check saying no.
 */
function outcomeOf(name: string, namespace: string, status: Record<string, any>): Verdict | undefined {
  const conditions: { type?: string; status?: string; reason?: string; message?: string }[] = status.conditions ?? [];
  const done = conditions.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  if (!done) return undefined;
  if (done.type === 'Complete') return { result: 'pass', detail: `Job ${name} succeeded`, value: 'Complete' };
  if (done.reason === 'DeadlineExceeded') return { result: 'error', detail: `Job ${name} timed out (${done.message ?? 'active deadline exceeded'}); its pods: kubectl get pods -n ${namespace} -l job-name=${name}`, value: 'DeadlineExceeded' };
  return { result: 'fail', detail: `Job ${name} failed (${done.reason ?? 'Failed'}${done.message ? `: ${done.message}` : ''}); its logs: kubectl logs -n ${namespace} job/${name}`, value: 'Failed' };
}

/** JobDecision is what one check does with its Job gates. */
export interface JobDecision {
  /** The outcomes of the Job gates whose Job finished. */
  results: NamedVerdict[];
  /** Job gates whose Job runs (or waits its turn): the check waits for them. */
  pending: string[];
  /** A Job to create now (at most one: one Job of a StatefulSet runs at a time). */
  create?: { gate: string; job: Record<string, any> };
  /** Jobs still running for a step that is over (another revision or partition): stopped. */
  stop: JobView[];
  /** Finished Jobs counted now (per-check, or not passed): labelled checked so that no later check counts them again. */
  counted: JobView[];
}

/**
 * decideJobs says, for one check, which Job gates have an outcome, which wait, which Job to start and
 * which to stop.
 * - One Job of a StatefulSet runs at a time; a Job still stopping counts as running. Enforced gates go
 *   first, and a dry-run gate's Job in their way is stopped: a dry-run gate never holds a check.
 * - A running Job of the step is waited for (also one a previous controller started).
 * - A finished one gives the outcome: a per-step Job that passed, at every check of its step (the same
 *   pods, the same gate: JOB_KEY); any other outcome once, so a failing check runs its Job again at the
 *   next check as a failing query is asked again (failure-threshold counts them).
 * - While an enforced gate waits, nothing is counted: the outcomes are taken together, at the check
 *   that has them all (counting some and then waiting would lose them).
 * - A Job stuck past its deadline (STUCK_GRACE_SECONDS) is an error outcome and blocks nothing.
 * - Only a Job this process created gives an outcome (`ours`). Another one of the step (a team's copy
 *   that succeeds at once, or a predecessor's) is waited for while it runs, like any Job, and then the
 *   gate runs a Job of its own (the next run number): a copy never answers a gate, and a restart costs
 *   one run, never two Jobs at once.
 */
export function decideJobs(existing: readonly JobView[], checks: readonly JobCheck[], owner: Owner, dryRun: ReadonlySet<string>, nowMs: number): JobDecision {
  const out: JobDecision = { results: [], pending: [], stop: [], counted: [] };
  const keyed = checks.map((c) => ({ c, key: stepKey(c), dry: dryRun.has(c.name) }));
  const ofStep = (j: JobView, k: (typeof keyed)[number]) => j.gate === k.c.name && j.revision === k.c.revision && j.partition === k.c.partition && j.key === k.key;
  const stuck = (j: JobView) => !j.outcome && j.createdMs > 0 && nowMs > j.createdMs + (j.deadlineSeconds + STUCK_GRACE_SECONDS) * 1000;
  const outcome = (j: JobView): Verdict | undefined =>
    j.outcome ?? (stuck(j) ? { result: 'error', detail: `Job ${j.name} has not finished ${STUCK_GRACE_SECONDS}s after its deadline (suspended, or its pods do not terminate); it no longer blocks the checks`, value: 'Stuck' } : undefined);
  const running = existing.filter((j) => !j.outcome && !stuck(j));
  out.stop = running.filter((j) => !j.deleting && !keyed.some((k) => ofStep(j, k)));
  out.stop.push(...existing.filter((j) => stuck(j) && !j.deleting));
  let busy = running.length > 0;
  for (const k of [...keyed.filter((x) => !x.dry), ...keyed.filter((x) => x.dry)]) {
    const job = existing.filter((j) => ofStep(j, k) && j.ours && !j.deleting && !j.checked).sort((a, b) => b.run - a.run)[0];
    const done = job && outcome(job);
    if (job && done) {
      out.results.push({ name: k.c.name, verdict: done });
      if (k.c.runs === 'check' || done.result !== 'pass') out.counted.push(job);
      continue;
    }
    out.pending.push(k.c.name);
    if (job) continue;
    if (busy) {
      // An enforced gate waits for no dry-run gate's Job: that one is stopped, this one starts next.
      if (!k.dry) for (const j of running) if (dryRun.has(j.gate) && !j.deleting && !out.stop.includes(j)) out.stop.push(j);
      continue;
    }
    const run = 1 + Math.max(0, ...existing.filter((j) => ofStep(j, k)).map((j) => j.run));
    out.create = { gate: k.c.name, job: jobFor(k.c, owner, run) };
    busy = true;
  }
  if (out.pending.some((n) => !dryRun.has(n))) {
    out.results = [];
    out.counted = [];
  }
  return out;
}

/** stepKey is what a Job of the step judged (JOB_KEY): the pods at the step and the gate as written. */
export function stepKey(c: JobCheck): string {
  return createHash('sha256').update(JSON.stringify([c.pods, c.template, c.timeoutSeconds])).digest('hex').slice(0, 16);
}

/** jobName is a Job's name: the StatefulSet's, shortened, and a hash of the run (≤ 63, a pod label value). */
export function jobName(c: JobCheck, owner: Owner, run: number): string {
  const h = createHash('sha256').update(JSON.stringify([owner.uid, c.name, c.revision, c.partition, stepKey(c), run])).digest('hex').slice(0, 10);
  return `${owner.name.slice(0, 46).replace(/[-.]+$/, '')}-${c.hook ? 'hook' : 'check'}-${h}`;
}

/** labelValue is a StatefulSet name as a label value (a hash when the name is not one). */
export function labelValue(name: string): string {
  return /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(name) ? name : `h-${createHash('sha256').update(name).digest('hex').slice(0, 20)}`;
}

/**
 * jobFor builds the Job of one run of a gate: the template, owned by the StatefulSet (deleted with
 * it), labelled and annotated with the step it judges, its timeout as activeDeadlineSeconds, no retry
 * unless the template asks (a check that fails should say so, not try six times), removed an hour after
 * it finished unless the template says otherwise, and told what it judges through the environment.
 */
export function jobFor(c: JobCheck, owner: Owner, run: number): Record<string, any> {
  const t = structuredClone(c.template);
  const spec = t.spec as Record<string, any>;
  const podSpec = spec.template.spec as Record<string, any>;
  podSpec.restartPolicy ??= 'Never';
  const env = [
    { name: 'PHASED_ROLLOUT_NAMESPACE', value: owner.namespace },
    { name: 'PHASED_ROLLOUT_STATEFULSET', value: owner.name },
    { name: 'PHASED_ROLLOUT_REVISION', value: c.revision },
    { name: 'PHASED_ROLLOUT_PARTITION', value: String(c.partition) },
    { name: 'PHASED_ROLLOUT_POD', value: c.pod },
    { name: c.hook ? 'PHASED_ROLLOUT_HOOK' : 'PHASED_ROLLOUT_GATE', value: c.name },
    ...Object.entries(c.env ?? {}).map(([name, value]) => ({ name, value })),
  ];
  for (const ctr of podSpec.containers as Record<string, any>[]) ctr.env = [...env.filter((e) => !(ctr.env ?? []).some((x: { name: string }) => x.name === e.name)), ...(ctr.env ?? [])];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobName(c, owner, run),
      namespace: owner.namespace,
      labels: { ...(t.metadata?.labels ?? {}), 'app.kubernetes.io/managed-by': 'phased-rollout', [JOB_LABEL]: labelValue(owner.name) },
      annotations: { ...(t.metadata?.annotations ?? {}), [JOB_GATE]: c.name, [JOB_REVISION]: c.revision, [JOB_PARTITION]: String(c.partition), [JOB_KEY]: stepKey(c), [JOB_RUN]: String(run), ...(c.hook ? { [JOB_HOOK]: c.hook } : {}), ...(c.analysis ? { [JOB_ANALYSIS]: 'true' } : {}) },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: owner.name, uid: owner.uid }],
    },
    spec: {
      ...spec,
      backoffLimit: spec.backoffLimit ?? 0,
      activeDeadlineSeconds: c.timeoutSeconds,
      ttlSecondsAfterFinished: spec.ttlSecondsAfterFinished ?? DEFAULT_JOB_TTL_SECONDS,
    },
  };
}
