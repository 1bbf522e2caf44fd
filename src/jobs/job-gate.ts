// Job gates: a Kubernetes Job, from a template in a gate policy, run in the StatefulSet's namespace as a
// check (a smoke test, `etcdctl endpoint health --cluster`, a data verification). The Job succeeds: the
// gate passes; it fails: the gate fails; it cannot be created or runs past its timeout: the gate could
// not be evaluated (error). All the decisions are here, pure; controller/jobs.ts lists, creates, labels
// and deletes.
//
// Everything the controller needs to know about a Job lives on the Job (labels, annotations, owner), not
// in the controller's memory: a restarted controller (or a new leader) finds the Job its predecessor
// started and waits for it, and two controllers racing pick the same deterministic name, so the API
// server lets only one create it.
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
/** Set on a Job once its outcome was counted (a per-check Job, or one that did not pass): a later check runs a new one. */
export const JOB_CHECKED = 'phased-rollout.io/checked';
/** Kept for inspection this long after it finished, unless the template says otherwise. */
export const DEFAULT_JOB_TTL_SECONDS = 3600;

/** JobView is what the decisions need of a Job. */
export interface JobView {
  name: string;
  uid: string;
  gate: string;
  revision: string;
  partition: number;
  run: number;
  checked: boolean;
  deleting: boolean;
  /** Undefined while it runs. */
  outcome?: Verdict;
}

/** Owner is the StatefulSet the Jobs belong to. */
export interface Owner {
  namespace: string;
  name: string;
  uid: string;
}

/** jobView reads one Job (as the API returns it) for the decisions; undefined for a Job not ours. */
export function jobView(job: { metadata?: Record<string, any>; status?: Record<string, any> }, owner: Owner): JobView | undefined {
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
    checked: m.labels?.[JOB_CHECKED] === 'true',
    deleting: Boolean(m.deletionTimestamp),
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
 * which to stop. One Job of a StatefulSet runs at a time: a Job still stopping counts as running.
 * A running Job of the step is waited for (also one a previous controller started); a finished one
 * gives the outcome: a per-step Job that passed at every check of the step; any other outcome once,
 * so a failing check runs its Job again at the next check as a failing query is asked again (failure-
 * threshold counts them), and `kubectl phased-rollout retry` after a failure never meets the old one.
 */
export function decideJobs(existing: readonly JobView[], checks: readonly JobCheck[], owner: Owner): JobDecision {
  const out: JobDecision = { results: [], pending: [], stop: [], counted: [] };
  const ofStep = (j: JobView, c: JobCheck) => j.gate === c.name && j.revision === c.revision && j.partition === c.partition;
  out.stop = existing.filter((j) => !j.outcome && !j.deleting && !checks.some((c) => ofStep(j, c)));
  let busy = existing.some((j) => !j.outcome);
  for (const c of checks) {
    const mine = existing.filter((j) => ofStep(j, c) && !j.deleting && !j.checked);
    const job = mine.sort((a, b) => b.run - a.run)[0];
    if (job?.outcome) {
      out.results.push({ name: c.name, verdict: job.outcome });
      if (c.runs === 'check' || job.outcome.result !== 'pass') out.counted.push(job);
      continue;
    }
    out.pending.push(c.name);
    if (job || busy) continue;
    const run = 1 + Math.max(0, ...existing.filter((j) => ofStep(j, c)).map((j) => j.run));
    out.create = { gate: c.name, job: jobFor(c, owner, run) };
    busy = true;
  }
  return out;
}

/** jobName is a Job's name: the StatefulSet's, shortened, and a hash of the run (≤ 63, a pod label value). */
export function jobName(c: JobCheck, owner: Owner, run: number): string {
  const h = createHash('sha256').update(JSON.stringify([owner.uid, c.name, c.revision, c.partition, run])).digest('hex').slice(0, 10);
  return `${owner.name.slice(0, 46).replace(/[-.]+$/, '')}-check-${h}`;
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
    { name: 'PHASED_ROLLOUT_GATE', value: c.name },
  ];
  for (const ctr of podSpec.containers as Record<string, any>[]) ctr.env = [...env.filter((e) => !(ctr.env ?? []).some((x: { name: string }) => x.name === e.name)), ...(ctr.env ?? [])];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobName(c, owner, run),
      namespace: owner.namespace,
      labels: { ...(t.metadata?.labels ?? {}), 'app.kubernetes.io/managed-by': 'phased-rollout', [JOB_LABEL]: labelValue(owner.name) },
      annotations: { ...(t.metadata?.annotations ?? {}), [JOB_GATE]: c.name, [JOB_REVISION]: c.revision, [JOB_PARTITION]: String(c.partition), [JOB_RUN]: String(run) },
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
