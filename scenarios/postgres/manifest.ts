// The PostgreSQL cluster of the scenarios: PostgreSQL 15 run by Patroni 3, one primary and two streaming
// replicas in one StatefulSet, with Kubernetes itself as Patroni's store (its leader lock is an Endpoints
// object). Pure builders: a scenario applies what these return with kubectl, the tests read them as
// tables. examples/postgres/ says the same for a user (manifest.test.ts keeps the two the same).
//
// Patroni, not the StatefulSet controller, decides who is primary: the members race for the lock, the
// winner runs PostgreSQL read-write and writes its address into the leader Endpoints, the others
// stream from it. Each member keeps its data on its own PersistentVolumeClaim, so a replaced pod comes
// back with its data and rejoins as a replica (through pg_rewind if it was a primary that wrote past the
// point where the new primary took over).
import { dumpYaml } from '@kubernetes/client-node';

/** APP is the pods' `app` label; Patroni selects its members by it and the scope label. */
export const APP = 'postgres';
/** SCOPE is Patroni's cluster name: the leader Endpoints and Service, and `<SCOPE>-config`, carry it. */
export const SCOPE = 'postgres';
/** MEMBERS_SERVICE is the headless Service that names the members (the StatefulSet's serviceName). */
export const MEMBERS_SERVICE = 'postgres-members';
/** NAME is the StatefulSet, ServiceAccount, Role, Secret and ConfigMap name. */
export const NAME = 'postgres';
export const PG_PORT = 5432;
/** API_PORT is Patroni's REST API: /readiness, /liveness, /cluster, /switchover. */
export const API_PORT = 8008;
/** UID is the postgres account of the image (hack/node/images.sh postgres makes it 999). */
export const UID = 999;
/** DATA_MOUNT is where the member's volume is mounted; PGDATA is a folder inside it (initdb wants it empty). */
export const DATA_MOUNT = '/var/lib/postgresql/data';
export const PGDATA = `${DATA_MOUNT}/pg15`;
export const BIN_DIR = '/usr/lib/postgresql/15/bin';
/** GENERATION_KEY is the pod-template annotation whose change restarts every member. */
export const GENERATION_KEY = 'scenarios.phased-rollout.io/generation';

/** Options are what a scenario chooses. */
export interface Options {
  namespace: string;
  /** image holds PostgreSQL 15 and Patroni 3 (hack/node/images.sh postgres). */
  image: string;
  replicas?: number;
  /** generation is the template knob: another value is another pod template, rolled like a release. */
  generation?: number;
  /** realNode places the members on the test environment's real node (hack/real-node.sh). */
  realNode?: boolean;
  /** passwords of the superuser, the replication user and the REST API's writes (the Secret). */
  passwords?: { superuser: string; replication: string; restapi: string };
  /**
   * brokenReplication is the scenarios' bad release: the members are told a wrong replication password.
   * Each one still starts and passes Patroni's readiness (PostgreSQL runs), but a replica cannot stream.
   */
  brokenReplication?: boolean;
  /** annotations of the StatefulSet (the opt-in to phased-rollout and its gate policy). */
  annotations?: Record<string, string>;
}

/**
 * patroniConfig is the part of Patroni's configuration that is the same for every member (the
 * ConfigMap's patroni.yml); what differs by pod, and the credentials, come from the environment.
 * `bootstrap` is read once, by the member that initialises the cluster; `dcs` then lives in the
 * `<SCOPE>-config` object and is changed with `patronictl edit-config`.
 */
export function patroniConfig() {
  return {
    bootstrap: {
      dcs: {
        // A leader that has not renewed its lock for ttl seconds loses it; loop_wait is the heartbeat.
        ttl: 30,
        loop_wait: 10,
        retry_timeout: 10,
        // A replica more than 1 MiB behind is not promoted by a failover.
        maximum_lag_on_failover: 1048576,
        postgresql: {
          // An old primary that wrote past the fork rejoins through pg_rewind instead of a new base backup.
          use_pg_rewind: true,
          // One replication slot per member: the primary keeps the WAL a replica still needs.
          use_slots: true,
          parameters: { max_connections: 100, wal_level: 'replica', hot_standby: 'on', max_wal_senders: 10, max_replication_slots: 10 },
        },
      },
      // Checksums let pg_rewind work and catch torn pages; C.UTF-8 is the one locale the image has.
      initdb: [{ encoding: 'UTF8' }, { locale: 'C.UTF-8' }, 'data-checksums'],
    },
    postgresql: {
      // The image has no /run/postgresql the postgres user could write: the socket goes to /tmp.
      parameters: { unix_socket_directories: '/tmp' },
      pg_hba: [
        // Inside the pod (kubectl exec, Patroni's own checks) the socket is trusted.
        'local all all trust',
        'host replication all 0.0.0.0/0 scram-sha-256',
        'host all all 0.0.0.0/0 scram-sha-256',
      ],
    },
  };
}

const fieldEnv = (name: string, fieldPath: string) => ({ name, valueFrom: { fieldRef: { fieldPath } } });
const secretEnv = (name: string, key: string) => ({ name, valueFrom: { secretKeyRef: { name: NAME, key } } });

/** env is Patroni's configuration by pod: its name and address, the store, the paths and the credentials. */
export function env(o: { brokenReplication?: boolean } = {}) {
  return [
    fieldEnv('PATRONI_NAME', 'metadata.name'),
    fieldEnv('PATRONI_KUBERNETES_NAMESPACE', 'metadata.namespace'),
    fieldEnv('PATRONI_KUBERNETES_POD_IP', 'status.podIP'),
    { name: 'PATRONI_SCOPE', value: SCOPE },
    // Members are the pods with these labels and `cluster-name: <SCOPE>` (Patroni adds the scope label).
    { name: 'PATRONI_KUBERNETES_LABELS', value: `{app: ${APP}}` },
    // The leader lock is the Endpoints of the leader Service: Patroni writes the primary's address and
    // this port into it, so the Service routes to the primary (and to nothing while there is none).
    { name: 'PATRONI_KUBERNETES_USE_ENDPOINTS', value: 'true' },
    { name: 'PATRONI_KUBERNETES_PORTS', value: `[{"name": "postgresql", "port": ${PG_PORT}}]` },
    secretEnv('PATRONI_SUPERUSER_USERNAME', 'superuser-username'),
    secretEnv('PATRONI_SUPERUSER_PASSWORD', 'superuser-password'),
    secretEnv('PATRONI_REPLICATION_USERNAME', 'replication-username'),
    o.brokenReplication ? { name: 'PATRONI_REPLICATION_PASSWORD', value: 'not-the-replication-password' } : secretEnv('PATRONI_REPLICATION_PASSWORD', 'replication-password'),
    // The REST API's writes (switchover, restart, reinitialise) ask for these; its reads, and so the
    // probes, do not.
    secretEnv('PATRONI_RESTAPI_USERNAME', 'restapi-username'),
    secretEnv('PATRONI_RESTAPI_PASSWORD', 'restapi-password'),
    { name: 'PATRONI_POSTGRESQL_DATA_DIR', value: PGDATA },
    { name: 'PATRONI_POSTGRESQL_BIN_DIR', value: BIN_DIR },
    // The home folder is the image's, read-only to postgres.
    { name: 'PATRONI_POSTGRESQL_PGPASS', value: '/tmp/pgpass' },
    { name: 'PATRONI_POSTGRESQL_LISTEN', value: `0.0.0.0:${PG_PORT}` },
    { name: 'PATRONI_POSTGRESQL_CONNECT_ADDRESS', value: `$(PATRONI_KUBERNETES_POD_IP):${PG_PORT}` },
    { name: 'PATRONI_RESTAPI_LISTEN', value: `0.0.0.0:${API_PORT}` },
    { name: 'PATRONI_RESTAPI_CONNECT_ADDRESS', value: `$(PATRONI_KUBERNETES_POD_IP):${API_PORT}` },
    // psql in the pod finds the server's socket.
    { name: 'PGHOST', value: '/tmp' },
  ];
}

/** serviceAccount, role and roleBinding let Patroni keep its state in Endpoints and label its pods. */
export function rbac(o: Options) {
  const meta = { name: NAME, namespace: o.namespace };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta,
      rules: [
        // The leader lock, the cluster's configuration and its failover requests (patronictl remove deletes them).
        { apiGroups: [''], resources: ['endpoints'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] },
        // Each member publishes its state in its own pod's annotations and its role as a label.
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
        // `<SCOPE>-config`: a Service without selector, so the endpoints controller leaves its Endpoints to Patroni.
        { apiGroups: [''], resources: ['services'], verbs: ['create'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: NAME },
      subjects: [{ kind: 'ServiceAccount', name: NAME }],
    },
  ];
}

/** secret holds the two users Patroni creates at bootstrap and connects as, and the REST API's user. */
export function secret(o: Options) {
  const p = o.passwords ?? { superuser: 'superuser-secret', replication: 'replication-secret', restapi: 'restapi-secret' };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: NAME, namespace: o.namespace },
    stringData: {
      'superuser-username': 'postgres', 'superuser-password': p.superuser,
      'replication-username': 'replicator', 'replication-password': p.replication,
      'restapi-username': 'patroni', 'restapi-password': p.restapi,
    },
  };
}

/** configMap carries patroniConfig() as patroni.yml. */
export function configMap(o: Options) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: NAME, namespace: o.namespace }, data: { 'patroni.yml': dumpYaml(patroniConfig()) } };
}

/**
 * services: the leader Service has no selector, because its Endpoints are Patroni's (the primary only);
 * the headless Service names the members for the StatefulSet.
 */
export function services(o: Options) {
  const labels = { app: APP, 'cluster-name': SCOPE };
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: SCOPE, namespace: o.namespace, labels },
      spec: { type: 'ClusterIP', ports: [{ name: 'postgresql', port: PG_PORT, targetPort: PG_PORT }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: MEMBERS_SERVICE, namespace: o.namespace, labels },
      spec: {
        clusterIP: 'None',
        selector: labels,
        ports: [{ name: 'postgresql', port: PG_PORT }, { name: 'patroni', port: API_PORT }],
      },
    },
  ];
}

/** container is Patroni, which runs PostgreSQL as its child. Probes as Patroni documents them. */
export function container(o: Options) {
  return {
    name: 'patroni',
    image: o.image,
    ...(o.realNode ? { imagePullPolicy: 'Never' } : {}),
    command: ['patroni', '/etc/patroni/patroni.yml'],
    env: env(o),
    ports: [{ name: 'postgresql', containerPort: PG_PORT }, { name: 'patroni', containerPort: API_PORT }],
    // 200 for the primary, and for a replica whose PostgreSQL runs: Patroni 3.0 does not ask whether it
    // streams (the gate recipe does: examples/postgres/rolloutgate.yaml).
    readinessProbe: { httpGet: { path: '/readiness', port: API_PORT }, periodSeconds: 5, failureThreshold: 3, timeoutSeconds: 3 },
    // 200 while Patroni's heartbeat loop runs; a long replay or base backup keeps it passing.
    livenessProbe: { httpGet: { path: '/liveness', port: API_PORT }, initialDelaySeconds: 10, periodSeconds: 10, failureThreshold: 6, timeoutSeconds: 3 },
    securityContext: { runAsUser: UID, runAsGroup: UID, runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
    volumeMounts: [{ name: 'data', mountPath: DATA_MOUNT }, { name: 'config', mountPath: '/etc/patroni', readOnly: true }],
  };
}

/**
 * volumeOwner gives the volume to the postgres user before Patroni starts. Storage that honours
 * fsGroup does not need it; hostPath volumes (the test environment's) ignore fsGroup and come as root's.
 */
export function volumeOwner(o: Options) {
  return {
    name: 'volume-owner',
    image: o.image,
    ...(o.realNode ? { imagePullPolicy: 'Never' } : {}),
    command: ['sh', '-c', `chown ${UID}:${UID} ${DATA_MOUNT} && chmod 0700 ${DATA_MOUNT}`],
    securityContext: { runAsUser: 0, runAsNonRoot: false, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['CHOWN', 'FOWNER'] } },
    volumeMounts: [{ name: 'data', mountPath: DATA_MOUNT }],
  };
}

/** statefulSet is the three members, started together, each with its volume. */
export function statefulSet(o: Options) {
  const labels = { app: APP, 'cluster-name': SCOPE };
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: NAME, namespace: o.namespace, labels, ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      replicas: o.replicas ?? 3,
      serviceName: MEMBERS_SERVICE,
      // Members start together: which one becomes primary is Patroni's race, not the pod order.
      // Updates still replace one pod at a time, highest ordinal first, down to the partition (left out
      // here: whoever rolls, phased-rollout or a person with kubectl patch, owns it).
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate' },
      selector: { matchLabels: labels },
      template: {
        metadata: { labels, annotations: { [GENERATION_KEY]: String(o.generation ?? 1) } },
        spec: {
          serviceAccountName: NAME,
          ...(o.realNode ? {
            // The real node: its label chosen, its taint tolerated (hack/real-node.sh).
            nodeSelector: { 'phased-rollout.io/real-node': 'true' },
            tolerations: [{ key: 'phased-rollout.io/real-node', operator: 'Exists', effect: 'NoSchedule' }],
          } : {}),
          // Patroni stops PostgreSQL with a fast shutdown on SIGTERM; a primary then releases the lock at once.
          terminationGracePeriodSeconds: 30,
          // The Service links of this namespace would add POSTGRES_* variables nobody reads.
          enableServiceLinks: false,
          initContainers: [volumeOwner(o)],
          containers: [container(o)],
          volumes: [{ name: 'config', configMap: { name: NAME } }],
        },
      },
      volumeClaimTemplates: [{
        metadata: { name: 'data' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          ...(o.realNode ? { storageClassName: 'phased-rollout-hostpath' } : {}),
          resources: { requests: { storage: '1Gi' } },
        },
      }],
    },
  };
}

/** namespace is the scenario's own namespace: deleting it removes the cluster and its claims. */
export const namespace = (o: Options) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: o.namespace } });

/** cluster is the namespace and every object in it, in the order to apply them. */
export function cluster(o: Options): unknown[] {
  return [namespace(o), ...rbac(o), secret(o), configMap(o), ...services(o), statefulSet(o)];
}
