// The I/O of member hooks (src/rollout/hooks.ts decides): run the first hook the planner is waiting for
// (one at a time, in order) and say what came of it. A Job hook goes through the Job gates' machinery
// (controller/jobs.ts: deterministic names, one Job at a time, only a Job this process created believed,
// stopped when its step is over); an HTTP hook is one POST of what it acts on. Events and metrics tell each outcome.
import type { BatchV1Api, ConfigurationOptions } from '@kubernetes/client-node';
import { withDeadline } from '../src/k8s/deadline.js';
import type { EventRecorder, EventTarget } from '../src/k8s/events.js';
import { boundedGet } from '../src/net/bounded-get.js';
import { BODY_IN_DETAIL, bodyInDetail } from '../src/http-gate/verdict.js';
import { listed, urlAllowed } from '../src/prometheus/allowed.js';
import type { HookOutcome, HookRequest, HookRun } from '../src/rollout/hooks.js';
import type { Verdict } from '../src/rollout/types.js';
import type { Logger } from '../src/runtime/logger.js';
import type { ControllerMetrics } from '../src/runtime/metrics.js';
import { runJobGates } from './jobs.js';
import { takeCheckpoint } from './checkpoints.js';
import { releaseMember } from './restores.js';
import type { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';

export interface HookDeps {
  batch?: BatchV1Api;
  /** VolumeSnapshots (checkpoints: controller/checkpoints.ts); absent: a checkpoint is an error. */
  objects?: CustomObjectsApi;
  /** Claims, pods and the StatefulSet a restore on rollback reads and writes (controller/restores.ts). */
  apps?: AppsV1Api;
  core?: CoreV1Api;
  events: EventRecorder;
  metrics: ControllerMetrics;
  log: Logger;
  requestTimeoutMs?: number;
  /** The controller's --allowed-gate-urls (the planner holds hooks to it; checked here again). */
  allowedGateUrls?: readonly string[];
  write: () => ConfigurationOptions;
  /** The POST of an HTTP hook; postHook when absent (tests stand in a server's answer). */
  post?: (url: string, body: unknown, timeoutMs: number, showBody: boolean) => Promise<Verdict>;
}

/** hookBody is what an HTTP hook receives, and (as PHASED_ROLLOUT_* variables) a Job hook. */
export function hookBody(t: EventTarget, r: HookRun): Record<string, unknown> {
  return {
    hook: r.hook,
    when: r.when,
    namespace: t.namespace,
    statefulset: t.name,
    pod: r.pod,
    ordinal: r.ordinal,
    revision: r.revision,
    ...(r.fromRevision ? { fromRevision: r.fromRevision } : {}),
    direction: r.direction,
    updatedPods: r.updated,
    partition: r.partition,
  };
}

/** hookEnv is the body as a Job's environment (PHASED_ROLLOUT_POD, _REVISION, _NAMESPACE, _STATEFULSET come with every Job). */
function hookEnv(r: HookRun): Record<string, string> {
  return {
    PHASED_ROLLOUT_WHEN: r.when,
    PHASED_ROLLOUT_ORDINAL: String(r.ordinal),
    PHASED_ROLLOUT_FROM_REVISION: r.fromRevision ?? '',
    PHASED_ROLLOUT_DIRECTION: r.direction,
    PHASED_ROLLOUT_UPDATED_PODS: r.updated.join(','),
  };
}

/**
 * postHook sends one HTTP hook: a 2xx answer is success, any other a failure, no answer (or a timeout) an
 * error. A failing answer's body is shown (as an HTTP gate's: its start, stripped) only with `showBody`,
 * for a URL the operator listed: with an empty list a hook could POST to any address the controller
 * reaches (an un-proxied Prometheus with the query in the URL) and read its error text in the Event.
 */
export async function postHook(url: string, body: unknown, timeoutMs: number, showBody = false): Promise<Verdict> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { result: 'error', detail: 'invalid hook URL' };
  }
  const r = await boundedGet(u, { timeoutMs, maxBody: BODY_IN_DETAIL + 1, overflow: 'truncate', postJson: body });
  if ('error' in r) return { result: 'error', detail: `no answer from ${url}: ${r.error}` };
  if (r.status >= 200 && r.status < 300) return { result: 'pass', detail: `HTTP ${r.status}`, value: String(r.status) };
  return { result: 'fail', detail: `HTTP ${r.status}${showBody ? bodyInDetail(r.body) : ''}`, value: String(r.status) };
}

/**
 * runHooks works on the first run of the request: starts or looks at its Job, or sends its POST. The
 * outcome of that run (running while its Job runs); the planner records what is done and asks for the
 * next run.
 */
export async function runHooks(d: HookDeps, t: EventTarget, req: HookRequest, nowMs: number): Promise<HookOutcome[]> {
  const run = req.runs[0];
  if (!run) return [];
  const log = d.log.child({ namespace: t.namespace, name: t.name, hook: run.hook, pod: run.pod });
  // A checkpoint tells its own Events and metrics (CheckpointTaken, CheckpointFailed).
  if (run.checkpoint) return [await takeCheckpoint({ ...d, log, read: () => withDeadline(d.requestTimeoutMs ?? 10_000) }, t, { ...run, checkpoint: run.checkpoint }, nowMs)];
  // So does a restore on rollback (RestoreStarted, RestoreSkipped from the planner).
  if (run.restore) return [await releaseMember({ ...d, log, read: () => withDeadline(d.requestTimeoutMs ?? 10_000) }, t, { ...run, restore: run.restore })];
  let outcome: HookOutcome;
  if (run.template) {
    if (!d.batch) outcome = { key: run.key, result: 'error', detail: 'this controller runs no Jobs (no batch/v1 client)' };
    else {
      const check = { name: run.hook, runs: 'step' as const, timeoutSeconds: run.timeoutSeconds, template: run.template, revision: run.revision, partition: run.partition, pod: run.pod, pods: run.key, hook: run.when, env: hookEnv(run) };
      const jobs = await runJobGates({ batch: d.batch, events: d.events, log, read: () => withDeadline(d.requestTimeoutMs ?? 10_000), write: d.write }, t, [check], new Set(), nowMs, 'hook');
      const done = jobs.results[0]?.verdict;
      outcome = done ? { key: run.key, result: done.result === 'inconclusive' ? 'error' : done.result, detail: done.detail } : { key: run.key, result: 'running', detail: `its Job runs (kubectl get jobs -n ${t.namespace} -l phased-rollout.io/statefulset=${t.name})` };
    }
  } else if (run.url && urlAllowed(run.url, d.allowedGateUrls ?? [])) {
    await d.events.emit(t, 'Normal', 'HookStarted', `${run.when} hook ${run.hook} for pod ${run.pod}: POST ${run.url}`, d.write());
    const v = await (d.post ?? postHook)(run.url, hookBody(t, run), run.timeoutSeconds * 1000, listed(run.url, d.allowedGateUrls ?? []));
    outcome = { key: run.key, result: v.result === 'inconclusive' ? 'error' : v.result, detail: v.detail };
  } else outcome = { key: run.key, result: 'error', detail: `hook ${run.hook} has no Job template and no allowed URL` };
  if (outcome.result !== 'running') {
    d.metrics.hookRuns.inc({ namespace: t.namespace, statefulset: t.name, hook: run.hook, when: run.when, result: outcome.result });
    log.info({ result: outcome.result, detail: outcome.detail }, 'hook finished');
    if (outcome.result === 'pass') await d.events.emit(t, 'Normal', 'HookSucceeded', `${run.when} hook ${run.hook} for pod ${run.pod} succeeded (${outcome.detail})`, d.write());
    // A revert's hook failing is told by the planner, with what the revert does next.
    else if (!req.bounded) await d.events.emit(t, 'Warning', 'HookFailed', `${run.when} hook ${run.hook} for pod ${run.pod} ${outcome.result === 'fail' ? 'failed' : 'could not run'}: ${outcome.detail}`, d.write());
  }
  return [outcome];
}
