// The webhook's flags (SPEC §5). Each has an env twin PHASED_ROLLOUT_<FLAG>; `--help` prints them.
import type { Schema } from '../src/runtime/config.js';

/** DEFAULT_CONTROLLER_USERNAME is the controller's service account in the default install. */
export const DEFAULT_CONTROLLER_USERNAME = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';

/** webhookSchema lists every setting of phased-rollout-webhook. */
export const webhookSchema = {
  port: { kind: 'port', default: '9443', doc: 'HTTPS port of the admission endpoint POST /mutate' },
  'bind-address': { kind: 'string', default: '0.0.0.0', doc: 'address both ports listen on (127.0.0.1 for local tests)' },
  'tls-cert-file': { kind: 'string', required: true, doc: 'PEM serving certificate (chain); reloaded when it changes on disk' },
  'tls-key-file': { kind: 'string', required: true, doc: 'PEM private key of the serving certificate' },
  'tls-poll-interval': { kind: 'duration', default: '10s', doc: 'how often the certificate files are re-read in case a file watch misses a change' },
  'metrics-port': { kind: 'port', default: '8080', doc: 'plain-HTTP port for /metrics, /healthz and /readyz' },
  'controller-username': {
    kind: 'list',
    default: DEFAULT_CONTROLLER_USERNAME,
    doc: 'username whose requests may move the partition (repeat the flag, or comma-separate in the env var)',
  },
  'allowed-prometheus-urls': {
    kind: 'list',
    doc: 'deny a phased-rollout.io/prometheus-url outside these URL prefixes (same list as the controller\'s; empty: any)',
  },
  'cluster-policies': {
    kind: 'bool',
    doc: 'read ClusterRolloutGates and Namespace labels (list+watch, in-cluster config or --kubeconfig) to apply policies that select and enforce in namespaces; not ready, and StatefulSet writes refused, until both have listed',
  },
  kubeconfig: { kind: 'string', doc: 'kubeconfig file for --cluster-policies (default: the in-cluster service account)' },
  'max-connections': {
    kind: 'int',
    default: '256',
    doc: 'open HTTPS sockets at most; at the cap the longest-idle socket (no request in flight) is closed to make room for a new one',
  },
  'request-header-timeout': {
    kind: 'duration',
    default: '5s',
    doc: 'close a connection whose request head is not complete this long after its TLS handshake (on a kept-alive connection: after the first byte of the request)',
  },
  'request-timeout': {
    kind: 'duration',
    default: '10s',
    doc: 'answer 408 and close when a request, head and body, has not fully arrived this long after its first byte (the API server gives up after the webhook\'s timeoutSeconds anyway); at least --request-header-timeout',
  },
  'request-body-timeout': {
    kind: 'duration',
    default: '2s',
    doc: 'close a connection whose request body has not fully arrived this long after its head (at a random point of the second half), plus 1s per MiB the body declares; at the socket cap, a body still arriving gives way to a new connection, the one that has used most of its time first (the API server sends a review at once)',
  },
  'shutdown-timeout': { kind: 'duration', default: '9s', doc: 'how long SIGTERM waits for in-flight requests before exiting' },
  'log-level': { kind: 'level', default: 'info', doc: 'trace, debug, info, warn, error or fatal' },
} as const satisfies Schema;
