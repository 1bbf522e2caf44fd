// The I/O of Job gates (src/jobs/job-gate.ts decides): list the StatefulSet's check Jobs, stop those of a
// step that is over, label a per-check Job once its outcome is counted, start the next Job. One LIST per
// check of a StatefulSet that has Job gates, and only while a check is due: no cache of every Job of the
// cluster in the controller's memory for the few StatefulSets that use them.
import { PatchStrategy, setHeaderOptions, type BatchV1Api, type ConfigurationOptions, type V1Job } from '@kubernetes/client-node';
import { apiErrorCode, apiErrorMessage } from '../src/k8s/errors.js';
import type { EventRecorder, EventTarget } from '../src/k8s/events.js';
import { CreatedJobs } from '../src/jobs/created.js';
import { decideJobs, jobView, labelValue, JOB_CHECKED, JOB_HOOK, JOB_LABEL, JOB_PARTITION, JOB_REVISION, type JobCheck, type JobView } from '../src/jobs/job-gate.js';
import type { NamedVerdict } from '../src/rollout/gates.js';
import type { Logger } from '../src/runtime/logger.js';

export interface JobGateDeps {
  batch: BatchV1Api;
  events: EventRecorder;
  log: Logger;
  /** Options of a read (deadline). */
  read: () => ConfigurationOptions;
  /** Options of a write (fenced: no write once the leader's renew deadline has passed). */
  write: () => ConfigurationOptions;
  /** The Jobs this process created (only their outcomes count); the process's record when absent. */
  created?: CreatedJobs;
}

/** processJobs is this process's record of the Jobs it created: one for the gates' and the hooks' Jobs. */
const processJobs = new CreatedJobs();

/** JobGateResults: the outcomes of the Job gates whose Job finished, and the gates still waiting for theirs. */
export interface JobGateResults {
  results: NamedVerdict[];
  pending: string[];
  /** The Job each pending gate waits for, when it has one (started now, or running). */
  running?: Record<string, string>;
}

/** runJobGates does one check's Job work for one StatefulSet and says which gates have an outcome. */
export async function runJobGates(d: JobGateDeps, t: EventTarget, checks: readonly JobCheck[], dryRun: ReadonlySet<string>, nowMs: number, kind: 'gate' | 'hook' | 'analysis' = 'gate'): Promise<JobGateResults> {
  const owner = { namespace: t.namespace, name: t.name, uid: t.uid };
  const created = d.created ?? processJobs;
  let views: JobView[];
  try {
    const mark = created.mark();
    const list = await d.batch.listNamespacedJob({ namespace: t.namespace, labelSelector: `${JOB_LABEL}=${labelValue(t.name)}` }, d.read());
    const all = list.items.flatMap((j) => jobView(j as Parameters<typeof jobView>[0], owner, created.of(owner.uid)) ?? []);
    created.keep(owner.uid, all.map((v) => v.uid), mark);
    // A gate's Jobs, a member hook's and an Argo job metric's are decided apart: none stops or waits for
    // another's. A metric's Jobs are its own alone (two metrics of a run measure together, as in Argo).
    views = all.filter((v) => (kind === 'hook' ? v.hook : kind === 'analysis' ? v.analysis && checks.some((c) => c.name === v.gate) : !v.hook && !v.analysis));
  } catch (err) {
    const why = `cannot list the ${kind === 'hook' ? 'hook' : 'check'} Jobs: ${apiErrorMessage(err)}`;
    return { results: checks.map((c) => ({ name: c.name, verdict: { result: 'error', detail: why } })), pending: [] };
  }
  const decision = decideJobs(views, checks, owner, dryRun, nowMs);
  const results: NamedVerdict[] = [];
  const pending = [...decision.pending];
  for (const j of decision.stop) {
    try {
      // Foreground: the Job stays (and counts as running) until its pods are gone, so the next one never overlaps it.
      await d.batch.deleteNamespacedJob({ name: j.name, namespace: t.namespace, propagationPolicy: 'Foreground', body: { preconditions: { uid: j.uid } } }, d.write());
      d.log.info({ job: j.name, gate: j.gate }, 'check Job of a finished step stopped');
      await d.events.emit(t, 'Normal', 'JobCheckStopped', `stopped Job ${j.name} of gate ${j.gate}: its step (revision ${j.revision}, partition ${j.partition}) is over`, d.write());
    } catch (err) {
      if (apiErrorCode(err) !== 404 && apiErrorCode(err) !== 409) throw err;
    }
  }
  for (const r of decision.results) {
    const counted = decision.counted.find((j) => j.gate === r.name);
    const why = counted ? await markCounted(d, t.namespace, counted) : undefined;
    // Not labelled (another controller did it first, or the API refused): counting its outcome now could
    // count it twice. An error instead, which never counts as a fail.
    results.push(why ? { name: r.name, verdict: { result: 'error', detail: `Job ${counted?.name} could not be marked counted: ${why}` } } : r);
  }
  if (decision.create) {
    const { gate, job } = decision.create;
    let started = false;
    try {
      const made = await d.batch.createNamespacedJob({ namespace: t.namespace, body: job as V1Job }, d.write());
      // The UID the API server gave this create is what makes the Job ours (src/jobs/created.ts).
      if (!made.metadata?.uid) throw new Error('the API server answered without the Job\'s UID');
      created.add(owner.uid, made.metadata.uid);
      started = true;
    } catch (err) {
      // 409: another controller (a leader handing over) created it a moment ago, or someone else took the
      // name; either way not ours: the next check waits for it while it runs, then starts the next run.
      if (apiErrorCode(err) !== 409) {
        pending.splice(pending.indexOf(gate), 1);
        results.push({ name: gate, verdict: { result: 'error', detail: `cannot create the Job of gate ${gate}: ${apiErrorMessage(err)}` } });
      }
    }
    if (started) {
      d.log.info({ job: job.metadata.name, [kind]: gate }, `${kind === 'hook' ? 'hook' : 'check'} Job started`);
      const what = kind === 'hook' ? `${job.metadata.annotations[JOB_HOOK]} hook ${gate}` : `gate ${gate}`;
      await d.events.emit(t, 'Normal', kind === 'hook' ? 'HookStarted' : 'JobCheckStarted', `started Job ${job.metadata.name} for ${what} (revision ${job.metadata.annotations[JOB_REVISION]}, partition ${job.metadata.annotations[JOB_PARTITION]}); its logs: kubectl logs -n ${t.namespace} job/${job.metadata.name}`, d.write());
    }
  }
  const running: Record<string, string> = {};
  for (const v of views) if (!v.outcome && !v.deleting && pending.includes(v.gate) && !decision.stop.includes(v)) running[v.gate] = v.name;
  if (decision.create && pending.includes(decision.create.gate)) running[decision.create.gate] = decision.create.job.metadata.name;
  return { results, pending, running };
}

/** markCounted labels a Job counted, at the version read (two leaders never both count it); the reason it could not, or undefined. */
async function markCounted(d: JobGateDeps, namespace: string, j: JobView): Promise<string | undefined> {
  try {
    await d.batch.patchNamespacedJob(
      { name: j.name, namespace, body: { metadata: { uid: j.uid, resourceVersion: j.resourceVersion, labels: { [JOB_CHECKED]: 'true' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch, d.write()),
    );
    return undefined;
  } catch (err) {
    d.log.warn({ job: j.name, err: apiErrorMessage(err) }, 'could not label a counted check Job');
    return apiErrorMessage(err);
  }
}
