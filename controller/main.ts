#!/usr/bin/env node
// phased-rollout-controller: config -> informers -> queue -> reconcile -> plan() -> apply.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { AppsV1Api, BatchV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, PolicyV1Api, type V1Pod, type V1PodDisruptionBudget, type V1StatefulSet } from '@kubernetes/client-node';
import { makeApiClient, userAgent } from '../src/k8s/client.js';
import { apiErrorMessage } from '../src/k8s/errors.js';
import { EventRecorder } from '../src/k8s/events.js';
import { resilientInformer } from '../src/k8s/informer.js';
import { LeaderElector, leaderTimingProblem } from '../src/k8s/leader.js';
import { selectorMatches } from '../src/k8s/selector.js';
import { ownerStatefulSet, slimPod, slimStatefulSet } from '../src/k8s/view.js';
import { bootProcess } from '../src/runtime/process.js';
import { controllerMetrics, createRegistry } from '../src/runtime/metrics.js';
import { createOpsServer, Readiness } from '../src/runtime/ops-server.js';
import { WorkQueue } from '../src/runtime/queue.js';
import { FairSlots } from '../src/runtime/fair-slots.js';
import { onShutdown } from '../src/runtime/shutdown.js';
import { AnalysisRuns } from './argo.js';
import { controllerSchema } from './config.js';
import { notifications, notifyConfigProblems } from './notify.js';
import { groupPeers, isOptedInObject, Reconciler } from './reconcile.js';
import { enforcedIn, policyInformers, refsOf, startInBackground } from './policies.js';
import { loadStatusKeys } from './status-key.js';
import type { StatusKeys } from '../src/rollout/status-seal.js';

const PROGRAM = 'phased-rollout-controller';
/** LOSS_EXIT_MS bounds how long a replica that lost the Lease waits for running reconciles. */
const LOSS_EXIT_MS = 1000;
/** LIST_PAGE: objects per list request of StatefulSets and pods (client-go's reflector asks for 500 too). */
const LIST_PAGE = 500;
/** POLICY_LIST_WAIT_MS bounds the wait for the gate policy caches at start-up. */
const POLICY_LIST_WAIT_MS = 5000;

async function main(): Promise<void> {
  const booted = bootProcess(PROGRAM, 'Lowers the partition of opted-in StatefulSets one pod at a time while a Prometheus query passes (phased-rollout).', controllerSchema);
  if (!booted) return;
  const { c, log } = booted;

  const notifyProblems = notifyConfigProblems({ urls: c['notify-url'], format: c['notify-format'] });
  if (notifyProblems.length > 0) {
    log.fatal({ problems: notifyProblems }, 'invalid notification settings');
    process.exit(2);
  }

  // Tenancy through prom-label-proxy holds only if every query goes through the proxy: a StatefulSet's
  // own phased-rollout.io/prometheus-url must be held to the operator's list.
  if (c['prometheus-tenant-label'] && c['allowed-prometheus-urls'].length === 0) {
    log.fatal({}, "--prometheus-tenant-label needs --allowed-prometheus-urls (the proxy's URL): otherwise a StatefulSet can send its queries to a Prometheus without the proxy");
    process.exit(2);
  }
  // An HTTP gate or hook calls what the list allows, with the controller's network reach: with an empty
  // list one could GET or POST the Prometheus behind the proxy (the query in its URL) and read the
  // answer's status, the bypass the tenancy is there to prevent.
  if (c['prometheus-tenant-label'] && c['allowed-gate-urls'].length === 0) {
    log.fatal({}, '--prometheus-tenant-label needs --allowed-gate-urls: otherwise an HTTP gate or hook can call a Prometheus without the proxy and read its answer');
    process.exit(2);
  }
  // A label name, and not one of the query API's own parameters (it would replace the query or its time).
  if (c['prometheus-tenant-label'] && (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(c['prometheus-tenant-label']) || ['query', 'time', 'timeout', 'limit'].includes(c['prometheus-tenant-label']))) {
    log.fatal({ label: c['prometheus-tenant-label'] }, '--prometheus-tenant-label must be a Prometheus label name other than query, time, timeout and limit');
    process.exit(2);
  }

  const timing = leaderTimingProblem(c['leader-election-lease-duration'], c['leader-election-renew-deadline'], c['leader-election-renew-period']);
  if (c['leader-elect'] && timing) {
    log.fatal({ reason: timing }, 'unsafe leader election timings');
    process.exit(2);
  }

  const kc = new KubeConfig();
  try {
    if (c.kubeconfig) kc.loadFromFile(c.kubeconfig);
    else kc.loadFromCluster();
  } catch (err) {
    log.fatal({ reason: (err as Error).message }, 'cannot load the Kubernetes client configuration');
    process.exit(1);
  }
  const identity = `${hostname()}_${randomBytes(4).toString('hex')}`;
  // Every write names this replica in its User-Agent, so the audit log tells replicas apart.
  const agent = userAgent(PROGRAM, identity);
  const registry = createRegistry();
  // Checks and hooks run under these slots, beside the workers (controller/background.ts).
  const slots = new FairSlots({ total: c['max-checks-in-flight'], perTenant: c['max-checks-per-namespace'] });
  const metrics = controllerMetrics(registry, { inFlight: () => slots.stats() });
  const apps = makeApiClient(kc, AppsV1Api, agent, metrics.kubeRequests);
  const core = makeApiClient(kc, CoreV1Api, agent, metrics.kubeRequests);
  const policy = makeApiClient(kc, PolicyV1Api, agent, metrics.kubeRequests);
  const readiness = new Readiness();
  const ns = c.namespace;

  let queue: WorkQueue | undefined;
  const enqueue = (key: string) => queue?.add(key);
  // Opted in by its annotation, or by an enforcing ClusterRolloutGate that selects its namespace.
  // (Declared before the caches it reads; called only once they exist.)
  // eslint-disable-next-line prefer-const
  let optedIn = (s: V1StatefulSet): boolean => isOptedInObject(s);
  const statefulSets = resilientInformer<V1StatefulSet>(
    kc,
    ns ? `/apis/apps/v1/namespaces/${ns}/statefulsets` : '/apis/apps/v1/statefulsets',
    (page) => (ns ? apps.listNamespacedStatefulSet({ namespace: ns, ...page }) : apps.listStatefulSetForAllNamespaces(page)),
    log,
    (type, s) => {
      if (type === 'delete' || optedIn(s)) enqueue(`${s.metadata?.namespace}/${s.metadata?.name}`);
      // A member of a rollout group finishing, failing or going away may let another one move. Only
      // grouped StatefulSets pay for the scan of their namespace.
      for (const peer of groupPeers((namespace) => statefulSets.list(namespace), s)) enqueue(peer);
    },
    { onWatch: () => metrics.kubeRequests.inc({ verb: 'watch', resource: 'statefulsets' }), pageSize: LIST_PAGE, slim: slimStatefulSet },
  );
  // Only pods that belong to a StatefulSet or DaemonSet carry controller-revision-hash: the label
  // selector keeps every other pod of the cluster out of this cache.
  const podSelector = 'controller-revision-hash';
  const pods = resilientInformer<V1Pod>(
    kc,
    ns ? `/api/v1/namespaces/${ns}/pods` : '/api/v1/pods',
    (page) => (ns ? core.listNamespacedPod({ namespace: ns, labelSelector: podSelector, ...page }) : core.listPodForAllNamespaces({ labelSelector: podSelector, ...page })),
    log,
    (_type, p) => {
      const owner = ownerStatefulSet(p);
      if (!owner) return;
      const s = statefulSets.get(owner, p.metadata?.namespace);
      if (!s) return;
      if (optedIn(s)) enqueue(`${p.metadata?.namespace}/${owner}`);
      // Zone safety: a pod of one group member going down or coming back holds or frees the others.
      for (const peer of groupPeers((namespace) => statefulSets.list(namespace), s)) enqueue(peer);
    },
    {
      labelSelector: podSelector,
      onWatch: () => metrics.kubeRequests.inc({ verb: 'watch', resource: 'pods' }),
      // A reconcile reads the pods of one StatefulSet: an index by owner, not a scan of the namespace.
      indexBy: (p) => {
        const owner = ownerStatefulSet(p);
        return owner ? `${p.metadata?.namespace}/${owner}` : undefined;
      },
      slim: slimPod,
      // Pods are the most numerous objects: listed LIST_PAGE at a time, trimmed as each page arrives.
      pageSize: LIST_PAGE,
    },
  );

  // PodDisruptionBudgets: a step first asks the ones over the StatefulSet's pods. The disruption
  // controller rewrites a PDB's status whenever a pod it covers changes readiness; that wakes the
  // opted-in StatefulSets whose pods it selects, so a held step moves as soon as the PDB allows it.
  const budgets = resilientInformer<V1PodDisruptionBudget>(
    kc,
    ns ? `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets` : '/apis/policy/v1/poddisruptionbudgets',
    () => (ns ? policy.listNamespacedPodDisruptionBudget({ namespace: ns }) : policy.listPodDisruptionBudgetForAllNamespaces()),
    log,
    (_type, b) => {
      for (const s of statefulSets.list(b.metadata?.namespace)) {
        if (optedIn(s) && selectorMatches(b.spec?.selector, s.spec?.template?.metadata?.labels)) enqueue(`${s.metadata?.namespace}/${s.metadata?.name}`);
      }
    },
    { onWatch: () => metrics.kubeRequests.inc({ verb: 'watch', resource: 'poddisruptionbudgets' }) },
  );

  // Gate policies (phased-rollout.io/gates): a change wakes the StatefulSets that name the policy. A
  // ClusterRolloutGate may also select namespaces, before the change or after it (the event shows only
  // the new version), so its change wakes every opted-in StatefulSet (those it enforced on carry our
  // status, so they count): cluster policies change seldom, and the queue folds repeats. A namespace's
  // labels changing wakes its StatefulSets.
  const wakeNamespace = (namespace: string) => {
    for (const s of statefulSets.list(namespace)) if (optedIn(s)) enqueue(`${s.metadata?.namespace}/${s.metadata?.name}`);
  };
  const objects = makeApiClient(kc, CustomObjectsApi, agent, metrics.kubeRequests);
  const gatePolicies = policyInformers(
    kc,
    objects,
    core,
    ns,
    log,
    (ref, namespace) => {
      const cluster = ref.startsWith('cluster/');
      for (const s of statefulSets.list(namespace)) if (cluster ? optedIn(s) : refsOf(s).includes(ref)) enqueue(`${s.metadata?.namespace}/${s.metadata?.name}`);
    },
    (resource) => metrics.kubeRequests.inc({ verb: 'watch', resource }),
    wakeNamespace,
  );
  optedIn = (s) => isOptedInObject(s) || enforcedIn(s.metadata?.namespace, gatePolicies);
  let stopping = false;

  // The status key first: a status sealed by no key we hold must never be read as a record.
  let statusKeys: StatusKeys | undefined;
  if (c['status-key-secret']) {
    try {
      const loaded = await loadStatusKeys(core, c['status-key-secret']);
      statusKeys = loaded.keys;
      log.info({ secret: c['status-key-secret'], created: loaded.created, keys: loaded.keys.verify.length }, 'status key loaded');
    } catch (err) {
      log.fatal({ secret: c['status-key-secret'], reason: apiErrorMessage(err) }, 'cannot read or make the status key Secret');
      process.exit(1);
    }
  } else {
    log.warn({}, 'no --status-key-secret: statuses are neither sealed nor checked, so a status written past the webhook (a gap in admission) is read as our record');
  }

  const told = notifications({ urls: c['notify-url'], allowedUrls: c['allowed-notify-urls'], format: c['notify-format'], timeoutMs: c['notify-timeout'], requestTimeoutMs: c['request-timeout'], minIntervalMs: c['notify-min-interval'] }, core, log, metrics);
  let elector: LeaderElector | undefined;
  const reconciler = new Reconciler({
    statefulSets,
    pods,
    budgets,
    policies: gatePolicies,
    apps,
    core,
    batch: makeApiClient(kc, BatchV1Api, agent, metrics.kubeRequests),
    objects,
    analysisRuns: new AnalysisRuns(),
    events: new EventRecorder(core, log, identity),
    metrics,
    log,
    defaultPrometheusUrl: c['prometheus-url']?.replace(/\/+$/, ''),
    allowedPrometheusUrls: c['allowed-prometheus-urls'],
    allowedGateUrls: c['allowed-gate-urls'],
    statusSyncWaitMs: c['status-sync-wait'],
    httpGateTimeoutMs: c['http-gate-timeout'],
    prometheusTimeoutMs: c['prometheus-timeout'],
    maxGateAnswerBytes: c['max-gate-answer-bytes'],
    resyncMs: c['resync-period'],
    requestTimeoutMs: c['request-timeout'],
    ...(statusKeys ? { statusKeys } : {}),
    // With leader election no write starts once the renew deadline has passed (see leader.ts).
    fence: () => (elector ? elector.fence() : Infinity),
    notify: told.notify,
    slots,
    wake: enqueue,
    minPeriodSeconds: c['min-period-seconds'],
    ...(c['prometheus-tenant-label'] ? { tenantLabel: c['prometheus-tenant-label'] } : {}),
    ...(c['platform-prometheus-url'] ? { platformPrometheusUrl: c['platform-prometheus-url'].replace(/\/+$/, '') } : {}),
  });

  const ops = createOpsServer(registry, readiness);
  await new Promise<void>((resolve, reject) => {
    ops.once('error', reject);
    ops.listen(c['metrics-port'], c['bind-address'], resolve);
  });

  const startWork = () => {
    queue = new WorkQueue((key) => reconciler.reconcile(key), {
      concurrency: c.workers,
      onError: (key, err, retryInMs) => log.warn({ key, reason: apiErrorMessage(err), retryInMs }, 'reconcile failed; will retry'),
      onRequeue: (key, err) => log.debug({ key, reason: err.message }, 'looking again'),
    });
    metrics.leader.set(1);
    for (const s of statefulSets.list()) if (optedIn(s)) queue.add(`${s.metadata?.namespace}/${s.metadata?.name}`);
    log.info({ statefulSets: statefulSets.list().length, pods: pods.list().length }, 'reconciling');
  };
  const stopWork = async () => {
    metrics.leader.set(0);
    const q = queue;
    queue = undefined;
    await q?.stop();
    // Checks and hooks under way end within their own timeouts; none waiting for a slot starts now.
    await reconciler.stop();
  };

  try {
    await Promise.all([statefulSets.start(), pods.start(), budgets.start()]);
  } catch (err) {
    log.fatal({ reason: apiErrorMessage(err) }, 'cannot list StatefulSets, Pods and PodDisruptionBudgets');
    process.exit(1);
  }
  // Awaited for a few seconds at most: a cluster without the policy CRDs must not hold anything back
  // (controller/policies.ts), but where they exist, the first reconciles should not see them unlisted.
  // Until the ClusterRolloutGates and Namespaces have listed, steps wait (controller/policies.ts,
  // selectionUnknown), unless the ClusterRolloutGate CRD is not installed at all.
  let clusterAbsent = false;
  gatePolicies.clusterAbsent = () => clusterAbsent;
  const policiesListed = Promise.all([startInBackground(gatePolicies.namespaced, 'rolloutgates', log, () => stopping), gatePolicies.cluster ? startInBackground(gatePolicies.cluster, 'clusterrolloutgates', log, () => stopping, undefined, (yes) => (clusterAbsent = yes)) : undefined, gatePolicies.namespaces ? startInBackground(gatePolicies.namespaces, 'namespaces', log, () => stopping) : undefined]);
  await Promise.race([policiesListed, new Promise((r) => setTimeout(r, POLICY_LIST_WAIT_MS).unref())]);
  readiness.set(true);
  log.info({ namespace: ns ?? '(all)', identity, leaderElect: c['leader-elect'], metricsPort: c['metrics-port'] }, 'informers synced');

  if (c['leader-elect']) {
    elector = new LeaderElector(
      {
        api: makeApiClient(kc, CoordinationV1Api, agent, metrics.kubeRequests),
        namespace: c['leader-election-namespace'],
        name: c['leader-election-name'],
        identity,
        leaseDurationMs: c['leader-election-lease-duration'],
        renewDeadlineMs: c['leader-election-renew-deadline'],
        renewPeriodMs: c['leader-election-renew-period'],
        requestTimeoutMs: c['request-timeout'],
        log,
      },
      startWork,
      // Losing the Lease means another replica may act soon. The fence already refuses every new
      // write; give running reconciles a moment to end, then exit so that the process restarts clean
      // (as controller-runtime does) — never wait on them without a deadline.
      () => void Promise.race([stopWork(), new Promise((r) => setTimeout(r, LOSS_EXIT_MS))]).then(() => process.exit(1)),
    );
    elector.start();
  } else startWork();

  onShutdown(
    log,
    [
      { name: 'readiness', run: () => readiness.set(false, 'shutting down') },
      { name: 'work queue', run: stopWork },
      { name: 'lease', run: () => elector?.release() },
      // Messages already decided go out if they can within a moment; a dead receiver never holds shutdown.
      { name: 'notifications', run: () => told.notifier.stop(2000) },
      { name: 'informers', run: async () => void ((stopping = true), await Promise.all([statefulSets.stop(), pods.stop(), budgets.stop(), gatePolicies.namespaced.stop(), gatePolicies.cluster?.stop(), gatePolicies.namespaces?.stop()])) },
      { name: 'metrics server', run: () => new Promise<void>((r) => ops.close(() => r())) },
    ],
    c['shutdown-timeout'],
  );
}

void main();
