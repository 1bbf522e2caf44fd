// The controller's flags (SPEC §5). Each has an env twin PHASED_ROLLOUT_<FLAG>; `--help` prints them.
import type { Schema } from '../src/runtime/config.js';

/** controllerSchema lists every setting of phased-rollout-controller. */
export const controllerSchema = {
  kubeconfig: { kind: 'string', doc: 'kubeconfig file; in-cluster configuration when absent' },
  namespace: { kind: 'string', doc: 'watch only this namespace (default: all namespaces)' },
  'prometheus-url': { kind: 'string', doc: 'Prometheus base URL for StatefulSets without phased-rollout.io/prometheus-url' },
  'allowed-prometheus-urls': { kind: 'list', doc: 'query only Prometheus URLs under these prefixes (repeat or comma-separate; empty: any); others make the StatefulSet Invalid' },
  'prometheus-timeout': { kind: 'duration', default: '10s', doc: 'timeout of one gate query' },
  'max-gate-answer-bytes': { kind: 'int', default: '262144', doc: 'largest Prometheus answer read for one gate query (bytes); a larger one is an error, never a pass (a gate needs a sample or a few, not megabytes)' },
  'allowed-gate-urls': { kind: 'list', doc: 'call HTTP gates (phased-rollout.io/http.<name>) only under these URL prefixes (repeat or comma-separate; empty: any); others make the StatefulSet Invalid' },
  'status-sync-wait': { kind: 'duration', zero: true, default: '0s', doc: "before a step, wait up to this long after the last pod became available until the StatefulSet's status counts the ready and updated pods the controller sees (0s: step at once; measured slower, see docs/benchmarks.md)" },
  'http-gate-timeout': { kind: 'duration', default: '5s', doc: 'timeout of one HTTP gate request; no answer in time is an error, never a pass' },
  'notify-url': { kind: 'list', doc: 'POST a notification of every rollout start, step, pause, completion, failure and rollback to these URLs (repeat or comma-separate)' },
  'allowed-notify-urls': { kind: 'list', doc: 'POST to a notification Secret\'s url (phased-rollout.io/notify) only under these URL prefixes (repeat or comma-separate; empty: any)' },
  'notify-format': { kind: 'string', default: 'json', doc: 'body of --notify-url messages: json, or slack (an incoming-webhook message)' },
  'notify-min-interval': { kind: 'duration', zero: true, default: '1s', doc: 'at most one notification per destination per this long (waiting step messages of a rollout are merged, up to 50 pods a message); 0s: no limit' },
  'notify-timeout': { kind: 'duration', default: '5s', doc: 'upper bound of one notification attempt (5 attempts with backoff, then it is dropped and counted)' },
  'metrics-port': { kind: 'port', default: '8080', doc: 'plain-HTTP port for /metrics, /healthz and /readyz' },
  'bind-address': { kind: 'string', default: '0.0.0.0', doc: 'address the metrics port listens on' },
  'leader-elect': { kind: 'bool', doc: 'hold a coordination.k8s.io/v1 Lease so only one replica acts' },
  'leader-election-namespace': { kind: 'string', default: 'phased-rollout-system', doc: 'namespace of the Lease' },
  'leader-election-name': { kind: 'string', default: 'phased-rollout-controller', doc: 'name of the Lease' },
  'leader-election-lease-duration': { kind: 'duration', default: '15s', doc: 'how long a Lease holds without renewal' },
  'leader-election-renew-deadline': { kind: 'duration', default: '10s', doc: 'the leader stops writing when it has not renewed for this long (must be < lease duration)' },
  'leader-election-renew-period': { kind: 'duration', default: '2s', doc: 'how often the leader renews, and others retry (must be < renew deadline)' },
  'request-timeout': { kind: 'duration', default: '10s', doc: 'upper bound of one Kubernetes API call' },
  'resync-period': { kind: 'duration', default: '60s', doc: 'how often an opted-in StatefulSet is looked at even without changes' },
  workers: { kind: 'int', default: '4', doc: 'StatefulSets reconciled in parallel (one key is never reconciled twice at once)' },
  'shutdown-timeout': { kind: 'duration', default: '9s', doc: 'how long SIGTERM waits for in-flight reconciles' },
  'log-level': { kind: 'level', default: 'info', doc: 'trace, debug, info, warn, error or fatal' },
} as const satisfies Schema;
