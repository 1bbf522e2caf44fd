// The etcd cluster of the scenarios: a headless Service and one StatefulSet (three members) or three
// StatefulSets of one member each (one per zone, one rollout group). Pure builders: the scenarios apply
// what these return with kubectl, the tests read them as tables.
//
// The members find each other by their stable DNS names (pod.service.namespace.svc.cluster.local); the
// Service publishes not-ready addresses because a member must resolve its peers before any of them is
// ready. Each member keeps its data on its own PersistentVolumeClaim, so a replaced pod comes back with
// its data and rejoins as the same member.
import { gateAnnotations } from './gate.js';

/**
 * Release is what a scenario applies: an etcd version, the bad release, or a damaging one (an etcd
 * version whose pod first runs a broken data migration, in `migrationImage`: see `migration`).
 */
export type Release = { kind: 'good'; image: string } | { kind: 'bad'; image: string } | { kind: 'damaging'; image: string; migrationImage: string };

/**
 * System is who rolls the template: phased-rollout (opted in), the StatefulSet controller alone, or
 * grafana/rollout-operator (the peer: OnDelete StatefulSets in a `rollout-group`, pods deleted by it
 * one at a time while every pod of the group is ready; readiness only, no health gate), or OpenKruise
 * Rollouts (a RollingUpdate StatefulSet under its Rollout, one member per batch; readiness only).
 */
export type System = 'ours' | 'ours-no-checkpoint' | 'plain' | 'grafana' | 'kruise';

/** optedIn: phased-rollout rolls the StatefulSets (ours-no-checkpoint is ours without the layout's checkpoint policy). */
export const optedIn = (system: System) => system === 'ours' || system === 'ours-no-checkpoint';

/** checkpointed: the StatefulSets name the layout's checkpoint policy (only ours, only a layout that has one). */
export const checkpointed = (l: Layout, system: System) => system === 'ours' && l.checkpointPolicy !== undefined;

/** Layout: one StatefulSet of three, or three StatefulSets of one (zones a, b, c). */
export interface Layout {
  namespace: string;
  /** StatefulSet names with their replica counts. */
  sets: { name: string; replicas: number }[];
  /** The claims' StorageClass and size; default the environment's hostPath class (no snapshots, no size enforced), 64Mi. */
  storage?: { className: string; size: string };
  /** A RolloutGate of this name, holding only a checkpoint with restore on rollback, is named by the StatefulSets (with ours). */
  checkpointPolicy?: string;
  /** phased-rollout.io/progress-deadline-seconds (opted in): a step whose member never becomes ready fails the rollout after this long. */
  progressDeadlineSeconds?: number;
}

/** APP is the pods' `app` label: the Service's selector and the gate's member selector. */
export const APP = 'etcd';
/** SERVICE is the headless Service that names the members. */
export const SERVICE = 'etcd';
export const CLIENT_PORT = 2379;
export const PEER_PORT = 2380;
export const METRICS_PORT = 2381;

/** single is the layout of one StatefulSet `etcd` with three members. */
export const single = (namespace: string): Layout => ({ namespace, sets: [{ name: 'etcd', replicas: 3 }] });

/** CSI_CLASS is the StorageClass and VolumeSnapshotClass of the project's CSI driver (hack/csi.sh up). */
export const CSI_CLASS = 'phased-rollout-csi';

/**
 * damagedReleaseLayout is `single` with its claims on the CSI driver's class, a checkpoint policy named
 * `etcd-checkpoint` and a progress deadline. 256Mi: the driver's volumes hold their size, and etcd
 * preallocates 64 MB for its WAL segment and as much again for the next one, beside its database. The
 * deadline: the recipe's gate judges members that run, and a step waits for its pod to be ready before
 * the gate runs at all; a member that crash-loops would hold the rollout in WaitingForPods for ever
 * (as the StatefulSet controller alone holds it). 120 s is three times what a good step takes here (a
 * pod ready in seconds, then 15 s of calm and three passes 5 s apart).
 */
export const damagedReleaseLayout = (namespace: string): Layout => ({ ...single(namespace), storage: { className: CSI_CLASS, size: '256Mi' }, checkpointPolicy: 'etcd-checkpoint', progressDeadlineSeconds: 120 });

/** zones is the layout of three one-member StatefulSets etcd-a, etcd-b, etcd-c in one rollout group. */
export const zones = (namespace: string): Layout => ({ namespace, sets: ['a', 'b', 'c'].map((z) => ({ name: `etcd-${z}`, replicas: 1 })) });

/** members are the pod names of a layout, in StatefulSet order. */
export function members(l: Layout): string[] {
  return l.sets.flatMap((s) => Array.from({ length: s.replicas }, (_, i) => `${s.name}-${i}`));
}

/** memberHost is a member's stable DNS name. */
export const memberHost = (l: Layout, pod: string) => `${pod}.${SERVICE}.${l.namespace}.svc.cluster.local`;

/** service is the headless Service of the members. */
export function service(l: Layout) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: SERVICE, namespace: l.namespace },
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: { app: APP },
      ports: [{ name: 'client', port: CLIENT_PORT }, { name: 'peer', port: PEER_PORT }],
    },
  };
}

/**
 * args are etcd's flags. The good releases keep the data on the volume and the cluster token of the
 * first bootstrap (both only matter for a member without data: a restarted member reads its identity
 * from the data directory).
 *
 * The bad release is a manifest copied from another cluster's: another --initial-cluster-token and a
 * data directory that is not on the volume. A member it starts has no data, so it bootstraps a new,
 * empty cluster under the new token instead of rejoining; the members of the real cluster refuse it
 * (cluster ID mismatch). Alone it has no leader and serves nothing; but once two members run it, those
 * two elect a leader of the new cluster and accept writes into an empty keyspace.
 */
export function args(l: Layout, release: Release): string[] {
  const bad = release.kind === 'bad';
  const peers = members(l).map((m) => `${m}=http://${memberHost(l, m)}:${PEER_PORT}`).join(',');
  const self = `$(POD_NAME).${SERVICE}.$(POD_NAMESPACE).svc.cluster.local`;
  return [
    '--name=$(POD_NAME)',
    `--data-dir=${bad ? '/tmp/etcd-data' : '/var/lib/etcd/data'}`,
    `--listen-client-urls=http://0.0.0.0:${CLIENT_PORT}`,
    `--listen-peer-urls=http://0.0.0.0:${PEER_PORT}`,
    `--listen-metrics-urls=http://0.0.0.0:${METRICS_PORT}`,
    `--advertise-client-urls=http://${self}:${CLIENT_PORT}`,
    `--initial-advertise-peer-urls=http://${self}:${PEER_PORT}`,
    `--initial-cluster=${peers}`,
    '--initial-cluster-state=new',
    `--initial-cluster-token=${bad ? 'etcd-cluster' : `etcd-${l.namespace}`}`,
  ];
}

/**
 * container is the etcd container. Probes as etcd's documentation recommends on Kubernetes: readiness
 * on /readyz and liveness on /livez of the metrics listener. The bad release's readiness probe is a TCP
 * check of the client port (as many charts have it): its member passes it while it is out of the
 * quorum, so the StatefulSet controller alone goes on to the next member.
 */
export function container(l: Layout, release: Release) {
  return {
    name: 'etcd',
    image: release.image,
    imagePullPolicy: 'Never',
    args: args(l, release),
    env: [
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    ],
    ports: [
      { name: 'client', containerPort: CLIENT_PORT },
      { name: 'peer', containerPort: PEER_PORT },
      { name: 'metrics', containerPort: METRICS_PORT },
    ],
    readinessProbe: release.kind === 'bad'
      ? { tcpSocket: { port: CLIENT_PORT }, periodSeconds: 2, failureThreshold: 3 }
      : { httpGet: { path: '/readyz', port: METRICS_PORT }, periodSeconds: 2, failureThreshold: 3 },
    livenessProbe: { httpGet: { path: '/livez', port: METRICS_PORT }, initialDelaySeconds: 15, periodSeconds: 5, failureThreshold: 6 },
    volumeMounts: [{ name: 'data', mountPath: '/var/lib/etcd' }],
  };
}

/** annotationsOf: the opt-in and the recipe (ours), the group of a zoned layout, the layout's progress deadline, the checkpoint policy when the layout has one (ours only). */
function annotationsOf(l: Layout, system: System, index: number): Record<string, string> {
  if (!optedIn(system)) return {};
  return {
    ...gateAnnotations(),
    ...(l.sets.length > 1 ? { 'phased-rollout.io/group': APP, 'phased-rollout.io/group-order': String(index) } : {}),
    ...(l.progressDeadlineSeconds !== undefined ? { 'phased-rollout.io/progress-deadline-seconds': String(l.progressDeadlineSeconds) } : {}),
    ...(checkpointed(l, system) && l.checkpointPolicy ? { 'phased-rollout.io/gates': l.checkpointPolicy } : {}),
  };
}

/** statefulSets are the layout's StatefulSets on `release`, opted in (ours) or left to the StatefulSet controller (plain). */
export function statefulSets(l: Layout, release: Release, system: System) {
  return l.sets.map((s, i) => ({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {
      name: s.name,
      namespace: l.namespace,
      annotations: annotationsOf(l, system, i),
      // rollout-operator finds its StatefulSets by this label (the group: one per etcd cluster).
      ...(system === 'grafana' ? { labels: { 'rollout-group': APP } } : {}),
    },
    spec: {
      replicas: s.replicas,
      ...(system === 'grafana' ? { updateStrategy: { type: 'OnDelete' } } : {}),
      serviceName: SERVICE,
      // Members start together: with OrderedReady the first would wait for readiness, which needs a quorum.
      // Updates still replace one pod at a time.
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { app: APP, member: s.name } },
      template: {
        // rollout-operator finds a StatefulSet's pods by their `name` label.
        metadata: { labels: { app: APP, member: s.name, ...(system === 'grafana' ? { name: s.name } : {}) } },
        spec: {
          // The real node: its label chosen, its taint tolerated (hack/real-node.sh).
          nodeSelector: { 'phased-rollout.io/real-node': 'true' },
          tolerations: [{ key: 'phased-rollout.io/real-node', operator: 'Exists', effect: 'NoSchedule' }],
          terminationGracePeriodSeconds: 10,
          ...(release.kind === 'damaging' ? { initContainers: [migration(release.migrationImage)] } : {}),
          containers: [container(l, release)],
        },
      },
      volumeClaimTemplates: [{
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: l.storage?.className ?? 'phased-rollout-hostpath', resources: { requests: { storage: l.storage?.size ?? '64Mi' } } },
      }],
    },
  }));
}

/** DB is the member's bbolt database on its volume (the data directory of a good release). */
export const DB = '/var/lib/etcd/data/member/snap/db';

/**
 * migration is the damaging release's init container: a data migration that runs before etcd starts
 * and leaves the database in a state etcd cannot open, as a bad migration would. It zeroes the file's
 * first four 4 KiB pages, where bbolt keeps its two meta pages: etcd then fails at start ("failed to
 * open database ... invalid database") and the member crash-loops. Zeroing, not truncating: a database
 * truncated to nothing is rebuilt from the member's own WAL as long as no Raft snapshot was taken yet
 * (etcd's snapshot-count is 10,000 entries, more than a scenario writes), and the member would heal.
 * A member without a database yet (none on the volume) has nothing to migrate.
 */
export function migration(image: string) {
  return {
    name: 'migrate',
    image,
    imagePullPolicy: 'Never',
    command: ['sh', '-c', `if [ -f ${DB} ]; then dd if=/dev/zero of=${DB} bs=4096 count=4 conv=notrunc && echo "migrated ${DB}"; else echo "no ${DB}: nothing to migrate"; fi`],
    volumeMounts: [{ name: 'data', mountPath: '/var/lib/etcd' }],
  };
}

/**
 * checkpointPolicy is the layout's RolloutGate: only a checkpoint (no gate, no hook; the StatefulSets
 * keep the recipe's gate in their annotations): a VolumeSnapshot of each member's claim, cut right
 * before the partition write that releases its pod, and given back to each member that ran a failed
 * revision during its rollback (docs/checkpoints.md). Undefined for a layout without one.
 */
export function checkpointPolicy(l: Layout) {
  if (!l.checkpointPolicy) return undefined;
  return {
    apiVersion: 'phased-rollout.io/v1alpha1',
    kind: 'RolloutGate',
    metadata: { name: l.checkpointPolicy, namespace: l.namespace },
    spec: { checkpoint: { volumeSnapshotClassName: l.storage?.className ?? CSI_CLASS, restore: 'on-rollback' } },
  };
}
