// Prometheus metrics (prom-client) on a registry per process, never the global one, so tests can build
// as many servers as they like in one process.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** createRegistry returns a registry with the standard process metrics. */
export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** WebhookMetrics are the webhook's metrics of SPEC §4.4 plus serving-certificate health. */
export interface WebhookMetrics {
  requests: Counter<'operation' | 'decision'>;
  duration: Histogram<'operation'>;
  tlsReloads: Counter<'result'>;
  certificateExpiry: Gauge;
}

/** webhookMetrics registers the webhook's metrics on `registry`. */
export function webhookMetrics(registry: Registry): WebhookMetrics {
  return {
    requests: new Counter({
      name: 'phased_rollout_admission_requests_total',
      help: 'Admission requests answered, by operation and decision (allowed, patched, denied, errored, malformed).',
      labelNames: ['operation', 'decision'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'phased_rollout_admission_duration_seconds',
      help: 'Time to answer one admission request, body parsing included.',
      labelNames: ['operation'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [registry],
    }),
    tlsReloads: new Counter({
      name: 'phased_rollout_tls_reloads_total',
      help: 'Serving certificate loads from disk, by result (success, failure: the last good pair was kept).',
      labelNames: ['result'],
      registers: [registry],
    }),
    certificateExpiry: new Gauge({
      name: 'phased_rollout_tls_certificate_expiry_timestamp_seconds',
      help: 'Unix time at which the served certificate expires.',
      registers: [registry],
    }),
  };
}

/** ControllerMetrics are the controller's metrics of SPEC §4.4. */
export interface ControllerMetrics {
  partition: Gauge<'namespace' | 'statefulset'>;
  phase: Gauge<'namespace' | 'statefulset' | 'phase'>;
  checks: Counter<'namespace' | 'statefulset' | 'result'>;
  gateResults: Counter<'namespace' | 'statefulset' | 'gate' | 'result' | 'dry_run'>;
  hookRuns: Counter<'namespace' | 'statefulset' | 'hook' | 'when' | 'result'>;
  checkpoints: Counter<'namespace' | 'statefulset' | 'result'>;
  checkpointSeconds: Histogram<'namespace' | 'statefulset'>;
  restores: Counter<'namespace' | 'statefulset' | 'result'>;
  replicas: Gauge<'namespace' | 'statefulset'>;
  checkDuration: Histogram<'namespace' | 'statefulset'>;
  steps: Counter<'namespace' | 'statefulset'>;
  reconcileDuration: Histogram;
  leader: Gauge;
  /** Checks and hooks running, and waiting for a slot (--max-checks-in-flight, --max-checks-per-namespace). */
  checksInFlight: Gauge<'state'>;
  notifications: Counter<'result'>;
  kubeRequests: Counter<'verb' | 'resource'>;
}

/** controllerMetrics registers the controller's metrics on `registry`. */
export function controllerMetrics(registry: Registry, o: { inFlight?: () => { running: number; waiting: number } } = {}): ControllerMetrics {
  const per = ['namespace', 'statefulset'] as const;
  return {
    partition: new Gauge({ name: 'phased_rollout_partition', help: 'Current partition of each opted-in StatefulSet.', labelNames: per, registers: [registry] }),
    replicas: new Gauge({ name: 'phased_rollout_replicas', help: 'spec.replicas of each opted-in StatefulSet (to compare with the partition).', labelNames: per, registers: [registry] }),
    phase: new Gauge({ name: 'phased_rollout_phase', help: 'Rollout phase, one-hot: 1 for the current phase.', labelNames: [...per, 'phase'], registers: [registry] }),
    checks: new Counter({ name: 'phased_rollout_checks_total', help: 'Gate checks by result (pass, fail, error, inconclusive): the verdict of all enforced gates together.', labelNames: [...per, 'result'], registers: [registry] }),
    gateResults: new Counter({
      name: 'phased_rollout_gate_results_total',
      help: 'Outcomes of each gate (query, query.<name>, http.<name>, compare.<name>) by result; dry_run="true" for gates that are recorded, never enforced.',
      labelNames: [...per, 'gate', 'result', 'dry_run'],
      registers: [registry],
    }),
    hookRuns: new Counter({
      name: 'phased_rollout_hook_runs_total',
      help: 'Finished runs of member hooks (prepare, settle) by result: pass, fail (counted as a failed check), error (timed out or unreachable).',
      labelNames: [...per, 'hook', 'when', 'result'],
      registers: [registry],
    }),
    checkpoints: new Counter({
      name: 'phased_rollout_checkpoints_total',
      help: 'Checkpoints of members (a VolumeSnapshot of each claim before the pod is replaced) by result: pass, fail (counted as a failed check), error (timed out, or the API refused).',
      labelNames: [...per, 'result'],
      registers: [registry],
    }),
    checkpointSeconds: new Histogram({
      name: 'phased_rollout_checkpoint_seconds',
      help: 'From the first VolumeSnapshot of a checkpoint created to its last cut (status.creationTime).',
      labelNames: per,
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800],
      registers: [registry],
    }),
    restores: new Counter({
      name: 'phased_rollout_restores_total',
      help: 'Members a rollback gave their checkpoint back (restore: on-rollback) by result: completed (the pod runs Ready on the restored claims), skipped (no usable checkpoint: the member comes back over the claims it had).',
      labelNames: [...per, 'result'],
      registers: [registry],
    }),
    checkDuration: new Histogram({
      name: 'phased_rollout_check_duration_seconds',
      help: 'Duration of one gate query against Prometheus.',
      labelNames: per,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    steps: new Counter({ name: 'phased_rollout_partition_steps_total', help: 'Partition decrements made after a passed gate.', labelNames: per, registers: [registry] }),
    reconcileDuration: new Histogram({
      name: 'phased_rollout_reconcile_duration_seconds',
      help: 'Duration of one reconcile (gate checks and hooks run beside it: phased_rollout_check_duration_seconds).',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    checksInFlight: new Gauge({
      name: 'phased_rollout_checks_in_flight',
      help: 'Gate checks and member hooks by state: running, or waiting for a slot (a namespace at --max-checks-per-namespace, or all at --max-checks-in-flight).',
      labelNames: ['state'],
      registers: [registry],
      collect() {
        const s = o.inFlight?.();
        if (!s) return;
        this.set({ state: 'running' }, s.running);
        this.set({ state: 'waiting' }, s.waiting);
      },
    }),
    leader: new Gauge({ name: 'phased_rollout_leader', help: '1 while this process holds the leader Lease (or runs without leader election).', registers: [registry] }),
    kubeRequests: new Counter({ name: 'phased_rollout_kube_api_requests_total', help: 'Kubernetes API requests by verb (list, watch, get, create, patch, update, delete) and resource; reads of a reconcile come from the informer caches.', labelNames: ['verb', 'resource'], registers: [registry] }),
    notifications: new Counter({ name: 'phased_rollout_notifications_total', help: 'Notifications by result: sent, failed (after every retry) or dropped (queue full, or shutdown).', labelNames: ['result'], registers: [registry] }),
  };
}
