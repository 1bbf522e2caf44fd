// A single PostgreSQL member, as most charts run it: no Patroni, no replica, one StatefulSet pod whose
// start-up script makes the database on an empty volume and then runs the server. The bad-migration
// scenario rolls it to a release whose init container migrates the data before the server starts, and
// the migration drops the table the application writes to. Pure builders, as manifest.ts;
// examples/postgres-single/statefulset.yaml says the same for a user (single.test.ts keeps the two the same).
import { DATA_MOUNT, GENERATION_KEY, namespace, PG_PORT, PGDATA, UID, volumeOwner } from './manifest.js';
import { TABLE } from './writer.js';

/** SINGLE names the StatefulSet, its Service and its Secret, and is the pods' `app` label. */
export const SINGLE = 'postgres';
/** CSI_CLASS is the StorageClass of the project's CSI driver on the real node (hack/csi.sh), which takes snapshots. */
export const CSI_CLASS = 'phased-rollout-csi';
/** NEW_TABLE is where the release's migration moves the writes to (and the application does not). */
export const NEW_TABLE = 'app_events';

/** SingleOptions are what the scenario chooses. */
export interface SingleOptions {
  namespace: string;
  /** image holds PostgreSQL 15 (hack/node/images.sh postgres). */
  image: string;
  /** generation is the template knob: another value is another pod template, rolled like a release. */
  generation?: number;
  /** migration: the release's init container that migrates the data, and drops TABLE. */
  migration?: boolean;
  /** realNode places the member on the test environment's real node, its claim on CSI_CLASS. */
  realNode?: boolean;
  annotations?: Record<string, string>;
  password?: string;
}

/**
 * startScript makes the database on an empty volume (initdb, the superuser's password from the Secret,
 * clients from anywhere with a password), then runs the server in the container's place.
 */
export function startScript(): string {
  return [
    'set -e',
    'if [ ! -s "$PGDATA/PG_VERSION" ]; then',
    '  printf %s "$POSTGRES_PASSWORD" > /tmp/pwfile',
    '  initdb -D "$PGDATA" -U postgres --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8',
    '  rm -f /tmp/pwfile',
    '  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"',
    'fi',
    // The image has no /run/postgresql the postgres user could write: the socket goes to /tmp.
    "exec postgres -D \"$PGDATA\" -c listen_addresses='*' -c unix_socket_directories=/tmp",
    '',
  ].join('\n');
}

/**
 * migrationScript is the release's data migration, as a migration step of a chart runs it: the server
 * started on the data directory (no network), psql, the server stopped. It moves the writes to a new
 * table and drops the old one, while the application still writes to the old one.
 */
export function migrationScript(): string {
  return [
    'set -e',
    "pg_ctl -D \"$PGDATA\" -w -t 60 -o \"-c listen_addresses='' -c unix_socket_directories=/tmp\" start",
    `psql -h /tmp -U postgres -d postgres -v ON_ERROR_STOP=1 -c 'BEGIN' -c 'CREATE TABLE IF NOT EXISTS ${NEW_TABLE} (id bigint PRIMARY KEY, body text NOT NULL)' -c 'DROP TABLE IF EXISTS ${TABLE}' -c 'COMMIT'`,
    'pg_ctl -D "$PGDATA" -m fast -w stop',
    '',
  ].join('\n');
}

const pull = (o: SingleOptions) => (o.realNode ? { imagePullPolicy: 'Never' } : {});
const asPostgres = { runAsUser: UID, runAsGroup: UID, runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
const dataEnv = [
  { name: 'PGDATA', value: PGDATA },
  // psql and pg_isready in the pod find the server's socket.
  { name: 'PGHOST', value: '/tmp' },
];

/** migration is the release's init container: migrationScript on the member's data, before the server starts. */
export function migration(o: SingleOptions) {
  return {
    name: 'migrate',
    image: o.image,
    ...pull(o),
    command: ['sh', '-c', migrationScript()],
    env: dataEnv,
    securityContext: asPostgres,
    volumeMounts: [{ name: 'data', mountPath: DATA_MOUNT }],
  };
}

/** server is the PostgreSQL container: startScript, ready once the server accepts connections. */
export function server(o: SingleOptions) {
  return {
    name: 'postgres',
    image: o.image,
    ...pull(o),
    command: ['sh', '-c', startScript()],
    env: [...dataEnv, { name: 'POSTGRES_PASSWORD', valueFrom: { secretKeyRef: { name: SINGLE, key: 'password' } } }],
    ports: [{ name: 'postgresql', containerPort: PG_PORT }],
    readinessProbe: { exec: { command: ['pg_isready', '-U', 'postgres'] }, periodSeconds: 2, failureThreshold: 3, timeoutSeconds: 3 },
    // On SIGTERM the server waits for its clients to leave (a smart shutdown), and a pooled client
    // never leaves: a fast shutdown ends their sessions and stops it at once.
    lifecycle: { preStop: { exec: { command: ['pg_ctl', '-D', PGDATA, '-m', 'fast', '-w', 'stop'] } } },
    securityContext: asPostgres,
    volumeMounts: [{ name: 'data', mountPath: DATA_MOUNT }],
  };
}

/** singleStatefulSet is the one member and its claim; a release with the migration runs it first. */
export function singleStatefulSet(o: SingleOptions) {
  const labels = { app: SINGLE };
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: SINGLE, namespace: o.namespace, labels, ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      replicas: 1,
      serviceName: SINGLE,
      updateStrategy: { type: 'RollingUpdate' },
      selector: { matchLabels: labels },
      template: {
        metadata: { labels, annotations: { [GENERATION_KEY]: String(o.generation ?? 1) } },
        spec: {
          ...(o.realNode ? {
            nodeSelector: { 'phased-rollout.io/real-node': 'true' },
            tolerations: [{ key: 'phased-rollout.io/real-node', operator: 'Exists', effect: 'NoSchedule' }],
          } : {}),
          terminationGracePeriodSeconds: 30,
          enableServiceLinks: false,
          initContainers: [volumeOwner(o), ...(o.migration ? [migration(o)] : [])],
          containers: [server(o)],
        },
      },
      volumeClaimTemplates: [{
        metadata: { name: 'data' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          // Snapshots need a CSI driver's class: on the real node the project's own.
          ...(o.realNode ? { storageClassName: CSI_CLASS } : {}),
          resources: { requests: { storage: '256Mi' } },
        },
      }],
    },
  };
}

/** singleSecret holds the superuser's name and password (the start-up script and the schema Job read them). */
export function singleSecret(o: SingleOptions) {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: SINGLE, namespace: o.namespace }, stringData: { username: 'postgres', password: o.password ?? 'superuser-secret' } };
}

/** singleService is how the application and the schema Job find the member. */
export function singleService(o: SingleOptions) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: SINGLE, namespace: o.namespace, labels: { app: SINGLE } },
    spec: { type: 'ClusterIP', selector: { app: SINGLE }, ports: [{ name: 'postgresql', port: PG_PORT, targetPort: PG_PORT }] },
  };
}

/** single is the namespace and every object in it, in the order to apply them. */
export function single(o: SingleOptions): unknown[] {
  return [namespace(o), singleSecret(o), singleService(o), singleStatefulSet(o)];
}
