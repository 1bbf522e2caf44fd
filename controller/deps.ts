// The collaborators of a reconcile (controller/reconcile.ts), shared with the check runner
// (controller/checks.ts) and the writer (controller/writes.ts): a module of its own so that neither
// imports back from the reconcile.
import type { AppsV1Api, BatchV1Api, CoreV1Api, CustomObjectsApi, V1Pod, V1PodDisruptionBudget, V1StatefulSet } from '@kubernetes/client-node';
import type { Fence } from '../src/k8s/deadline.js';
import type { EventRecorder, EventTarget } from '../src/k8s/events.js';
import type { ResilientInformer } from '../src/k8s/informer.js';
import type { HttpGateCall } from '../src/http-gate/client.js';
import type { GateQuery } from '../src/prometheus/client.js';
import type { Notification } from '../src/rollout/notify.js';
import type { StatusKeys } from '../src/rollout/status-seal.js';
import type { Verdict } from '../src/rollout/types.js';
import type { Logger } from '../src/runtime/logger.js';
import type { ControllerMetrics } from '../src/runtime/metrics.js';
import type { FairSlots } from '../src/runtime/fair-slots.js';
import type { PolicyInformers } from './policies.js';
import type { AnalysisRuns } from './argo.js';

/** ReconcileDeps are the collaborators of a reconcile; the clock and the gate query are injectable. */
export interface ReconcileDeps {
  statefulSets: ResilientInformer<V1StatefulSet>;
  pods: ResilientInformer<V1Pod>;
  /** PodDisruptionBudgets: each step asks the ones over the pods first (phased-rollout.io/respect-pdb). */
  budgets?: ResilientInformer<V1PodDisruptionBudget>;
  /** The gate policies (phased-rollout.io/gates); absent: a reference is never found. */
  policies?: PolicyInformers;
  apps: AppsV1Api;
  core: CoreV1Api;
  /** Job gates' Jobs (gate policies' `jobs`); absent: a Job gate is an error. */
  batch?: BatchV1Api;
  /** VolumeSnapshots of checkpoints (controller/checkpoints.ts); absent: a checkpoint is an error. */
  objects?: CustomObjectsApi;
  /** This process's Argo analysis runs (gate policies' spec.analysis); absent: an analysis gate is an error. */
  analysisRuns?: AnalysisRuns;
  events: EventRecorder;
  metrics: ControllerMetrics;
  log: Logger;
  defaultPrometheusUrl?: string;
  allowedPrometheusUrls?: readonly string[];
  prometheusTimeoutMs: number;
  /** --max-gate-answer-bytes: the largest Prometheus answer read for one query. */
  maxGateAnswerBytes?: number;
  resyncMs: number;
  /** Upper bound of one API call. */
  requestTimeoutMs?: number;
  /** Guards every write: with leader election, no write starts once the renew deadline has passed. */
  fence?: Fence;
  now?: () => number;
  query?: (q: GateQuery) => Promise<Verdict>;
  /** An Argo analysis metric's instant query: Prometheus's data, or why there is none; queryData when absent. */
  queryData?: (q: GateQuery) => Promise<{ data: { resultType: string; result: unknown } } | { error: string }>;
  /** A comparison gate's query for one revision: its sample values, or the error; querySamples when absent. */
  samples?: (q: GateQuery) => Promise<number[] | Verdict>;
  /** An Argo web metric's request; boundedGet when absent. */
  webRequest?: typeof import('../src/net/bounded-get.js').boundedGet;
  /** The HTTP gate call (phased-rollout.io/http.<name>); httpGate when absent. */
  http?: (g: HttpGateCall) => Promise<Verdict>;
  /** Upper bound of one HTTP gate request. */
  httpGateTimeoutMs?: number;
  /** The controller's --allowed-gate-urls. */
  allowedGateUrls?: readonly string[];
  /** The controller's --status-sync-wait (ms). */
  statusSyncWaitMs?: number;
  /** Hands notifications to the background sender (never blocks); `secret` is phased-rollout.io/notify. */
  notify?: (target: EventTarget, secret: string | undefined, notifications: Notification[]) => void;
  /** The slots checks and hooks run under (--max-checks-in-flight, --max-checks-per-namespace); one per controller. */
  slots?: FairSlots;
  /** Queues a key again: its check or hook has ended (absent: it is looked at on its next event or requeue). */
  wake?: (key: string) => void;
  /** --min-period-seconds: the floor of every period-seconds. */
  minPeriodSeconds?: number;
  /** --prometheus-tenant-label: queries carry the namespace in this URL parameter (prom-label-proxy). */
  tenantLabel?: string;
  /** --platform-prometheus-url: for the queries of ClusterRolloutGates with tenantScoped: false. */
  platformPrometheusUrl?: string;
  /**
   * The keys the status annotation is sealed with (--status-key-secret): a status that does not verify
   * is no record (src/rollout/status-seal.ts). Absent: statuses are written and read unsealed.
   */
  statusKeys?: StatusKeys;
}
