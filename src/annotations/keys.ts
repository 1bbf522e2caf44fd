// The names and limits of SPEC §2: every key and key prefix, and the bounds the parsers hold them to.
// The bottom of src/annotations/: it imports nothing, so every other file here may import it.

/** PREFIX is the annotation prefix of every key the product reads or writes. */
export const PREFIX = 'phased-rollout.io/';

/** KEYS names every annotation of SPEC §2. */
export const KEYS = {
  enabled: `${PREFIX}enabled`,
  query: `${PREFIX}query`,
  prometheusUrl: `${PREFIX}prometheus-url`,
  initialDelaySeconds: `${PREFIX}initial-delay-seconds`,
  periodSeconds: `${PREFIX}period-seconds`,
  successThreshold: `${PREFIX}success-threshold`,
  failureThreshold: `${PREFIX}failure-threshold`,
  prometheusSecret: `${PREFIX}prometheus-secret`,
  paused: `${PREFIX}paused`,
  standardRollingUpdate: `${PREFIX}standard-rolling-update`,
  steps: `${PREFIX}steps`,
  promote: `${PREFIX}promote`,
  abort: `${PREFIX}abort`,
  retry: `${PREFIX}retry`,
  onFailure: `${PREFIX}on-failure`,
  progressDeadlineSeconds: `${PREFIX}progress-deadline-seconds`,
  notify: `${PREFIX}notify`,
  group: `${PREFIX}group`,
  groupOrder: `${PREFIX}group-order`,
  respectPdb: `${PREFIX}respect-pdb`,
  httpSecret: `${PREFIX}http-secret`,
  dryRun: `${PREFIX}dry-run`,
  gates: `${PREFIX}gates`,
  analysis: `${PREFIX}analysis`,
  errorLimit: `${PREFIX}error-limit`,
  inconclusiveLimit: `${PREFIX}inconclusive-limit`,
  status: `${PREFIX}status`,
} as const;

/** QUERY_PREFIX starts the key of a named gate: `phased-rollout.io/query.<name>`. */
export const QUERY_PREFIX = `${KEYS.query}.`;

/** HTTP_PREFIX starts the key of an HTTP gate: `phased-rollout.io/http.<name>: <URL>`. */
export const HTTP_PREFIX = `${PREFIX}http.`;

/**
 * COMPARE_PREFIX starts the key of a comparison gate: `phased-rollout.io/compare.<name>: <PromQL>`, with
 * its criteria in `phased-rollout.io/compare.<name>.criteria` (src/analysis/compare.ts).
 */
export const COMPARE_PREFIX = `${PREFIX}compare.`;

/** MAX_GATES bounds the gates (queries and HTTP gates together): every one is a request per check period. */
export const MAX_GATES = 10;

/** INTEGER_BOUNDS holds the defaults and inclusive ranges of the integer annotations. */
export const INTEGER_BOUNDS = {
  initialDelaySeconds: { key: KEYS.initialDelaySeconds, min: 0, max: 86400, default: 30 },
  periodSeconds: { key: KEYS.periodSeconds, min: 1, max: 86400, default: 30 },
  successThreshold: { key: KEYS.successThreshold, min: 1, max: 1000, default: 3 },
  failureThreshold: { key: KEYS.failureThreshold, min: 0, max: 1000, default: 0 },
  // 0 = no deadline. Up to a week: a longer "deadline" is no deadline.
  progressDeadlineSeconds: { key: KEYS.progressDeadlineSeconds, min: 0, max: 604800, default: 0 },
  // Rollout groups: lower rolls first; ties go by name.
  groupOrder: { key: KEYS.groupOrder, min: 0, max: 1000, default: 0 },
  // Checks in a row that could not be evaluated before the rollout fails; 0 = never (an outage holds).
  errorLimit: { key: KEYS.errorLimit, min: 0, max: 1000, default: 0 },
  // Inconclusive checks in a row before the rollout pauses for a person; 0 = never pause (it holds).
  inconclusiveLimit: { key: KEYS.inconclusiveLimit, min: 0, max: 1000, default: 3 },
} as const;

/** MAX_QUERY_LENGTH bounds the PromQL text: it travels in a URL query string on every check. */
export const MAX_QUERY_LENGTH = 8192;

/** MAX_STEPS bounds the steps list (a 1,000-pod StatefulSet needs far fewer than that many stages). */
export const MAX_STEPS = 100;

/** MAX_POLICY_REFS bounds the policies one StatefulSet references. */
export const MAX_POLICY_REFS = 10;

// A named gate's name: a DNS label, so it reads well in status and Events.
export const GATE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
