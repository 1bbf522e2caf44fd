// The annotation contract of SPEC §2: every key, default, range and message lives here, and both the
// webhook and the controller parse through `parseAnnotations` so they can never disagree on a default.

import { CRITERIA_HELP, parseCriteria, type CompareCriteria } from './analysis/criteria.js';
import { placeholderProblem, urlProblem, type GateTemplate, type HttpGateTemplate } from './gate-templates.js';
import type { JobGateTemplate } from './jobs/template.js';
import type { HookTemplate } from './hooks/template.js';

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
const CRITERIA_SUFFIX = '.criteria';

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


/**
 * Step is one stage of phased-rollout.io/steps: a cumulative count of updated pods, or a percentage of
 * replicas; `pause` when a `pause` marker stands before it (the rollout waits for promotion there).
 */
export type Step = ({ count: number } | { percent: number }) & { pause?: true };

/** MAX_STEPS bounds the steps list (a 1,000-pod StatefulSet needs far fewer than that many stages). */
export const MAX_STEPS = 100;

/** RolloutConfig is the typed, defaulted form of an opted-in StatefulSet's annotations. */
export interface RolloutConfig {
  /** The gates: `query` and every `query.<name>`, in key order; all must pass. Empty only when bypassed. */
  gates: GateTemplate[];
  /** The HTTP gates: every `http.<name>`, in key order; all must pass too. */
  httpGates: HttpGateTemplate[];
  /** The comparison gates: every `compare.<name>`, in key order (new revision against old, per step). */
  compareGates: CompareTemplate[];
  /** The Job gates: only from gate policies (phased-rollout.io/gates), never an annotation. */
  jobGates: JobGateTemplate[];
  /** Member hooks (only policies have them: src/hooks/template.ts). */
  hooks: HookTemplate[];
  /** Gates (by name: query, query.<name>, http.<name>, compare.<name>) recorded but never enforced. */
  dryRun: string[];
  /** Checks in a row that could not be evaluated before the rollout fails (0: never). */
  errorLimit: number;
  /** Inconclusive checks in a row before the rollout pauses for a person (0: never). */
  inconclusiveLimit: number;
  /** Gate policies referenced (phased-rollout.io/gates): `name` (a RolloutGate here) or `cluster/name` (a ClusterRolloutGate). */
  policyRefs: string[];
  /** A Secret (labelled phased-rollout.io/gate-credentials) with the HTTP gates' token, username/password or ca.crt. */
  httpSecret?: string;
  prometheusUrl?: string;
  /**
   * Query and comparison gates (by name) of platform policies (src/policies/scope.ts): they go to the
   * controller's own --prometheus-url, never to prometheusUrl and never with prometheusSecret.
   */
  operatorGates?: string[];
  /** Query and comparison gates of ClusterRolloutGates with spec.tenantScoped false: sent without the tenant, to --platform-prometheus-url. */
  unscopedGates?: string[];
  initialDelaySeconds: number;
  periodSeconds: number;
  successThreshold: number;
  failureThreshold: number;
  progressDeadlineSeconds: number;
  /** The rollout group (StatefulSets of one namespace that roll one at a time), and this one's place in it. */
  group?: string;
  groupOrder: number;
  /** What a failed rollout does: stop where it is (halt), or put the known-good template back (rollback). */
  onFailure: 'halt' | 'rollback';
  prometheusSecret?: string;
  /** A Secret (labelled phased-rollout.io/notify-target) holding a `url` to POST notifications to. */
  notify?: string;
  paused: boolean;
  standardRollingUpdate: boolean;
  /** Each step first asks the PodDisruptionBudgets over the pods (phased-rollout.io/respect-pdb, default true). */
  respectPdb: boolean;
  /** Absent: one pod per step. */
  steps?: Step[];
  /**
   * The most pods one step may replace, set by an enforcing platform policy (src/policies/merge.ts):
   * `first` for the first step of a rollout (no pod on the revision yet: a canary), `later` (each a
   * count of pods, or a percent of the replicas rounded up; all hold) for every step after it. Absent:
   * the steps as written.
   */
  stepCeiling?: { first: number; later: Step[] };
  /**
   * What a user promoted with `kubectl phased-rollout promote`: a pause of the steps (`<revision>/<stage>`),
   * or one inconclusive hold (`<revision>@<partition>@<hold>`, the hold's start in Unix seconds: a
   * promotion lets that hold's step go, never a later hold of the same revision at the same partition).
   */
  promote?: { revision: string; stage: number } | { revision: string; partition: number; hold: number };
  /** The revision a user asked to roll back (`kubectl phased-rollout abort`). */
  abort?: string;
  /**
   * The Failed rollout a user asked to start again (`kubectl phased-rollout retry`): its revision and when
   * it failed (the status's `since`, in ms), so that a retry never restarts a later failure.
   */
  retry?: { revision: string; failedAt: number };
}

/** CompareTemplate is one comparison gate as written: its name, its PromQL with {{revision}}, its criteria. */
export interface CompareTemplate {
  /** `compare.<name>`. */
  name: string;
  query: string;
  criteria: CompareCriteria;
}

/** Problem is one bad annotation: its key, the value found, and what is allowed instead. */
export interface Problem {
  key: string;
  value: string | undefined;
  allowed: string;
}

/** OptIn is how the `enabled` annotation reads: absent, "false", "true", or anything else. */
export type OptIn = 'absent' | 'off' | 'on' | 'invalid';

/** ParseResult is the outcome of `parseAnnotations`. */
export type ParseResult =
  | { optIn: 'absent' | 'off'; ok: true; config: null }
  | { optIn: 'on' | 'invalid'; ok: true; config: RolloutConfig }
  | { optIn: 'on' | 'invalid'; ok: false; problems: Problem[] };

type Annotations = Record<string, string | undefined> | undefined | null;

/** readOptIn classifies the `enabled` annotation; a typo such as "yes" counts as opted in but invalid. */
export function readOptIn(annotations: Annotations): OptIn {
  const v = annotations?.[KEYS.enabled];
  if (v === undefined) return 'absent';
  if (v === 'false') return 'off';
  if (v === 'true') return 'on';
  return 'invalid';
}

/**
 * parseAnnotations validates every phased-rollout annotation of an opted-in object and returns either
 * the defaulted config or the complete list of problems (never just the first one, so a user fixes a
 * manifest in one round trip). Objects that are not opted in are not validated at all.
 */
export function parseAnnotations(annotations: Annotations): ParseResult {
  const key = memoKey(annotations);
  if (key === undefined) return parseUncached(annotations);
  const hit = memo.get(key);
  if (hit !== undefined) return hit;
  const result = deepFreeze(parseUncached(annotations));
  if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value as string);
  memo.set(key, result);
  return result;
}

// Why a memo: the webhook parses the annotations of both the object and the old object on every
// admission, and the controller on every reconcile, while a StatefulSet's annotations rarely change.
// Validating them cost ~10 µs per parse under load, a tenth of the webhook's whole per-request CPU
// (bench:mutate, docs/benchmarks.md). The result depends only on the phased-rollout.io/ entries, so
// those (in order) are the key; results are frozen because they are shared. Bounded in entries and in
// key size, so it holds at most a few MiB whatever the input; the oldest entry goes first.
const MEMO_ENTRIES = 512;
const MEMO_MAX_KEY = 16 * 1024;
const memo = new Map<string, ParseResult>();

function memoKey(annotations: Annotations): string | undefined {
  if (!annotations) return '';
  let key = '';
  for (const k in annotations) {
    if (!k.startsWith(PREFIX)) continue;
    const v = annotations[k];
    // An undefined value reads like an absent key; keep it distinct from "" all the same.
    key += v === undefined ? `${k}\u0001` : `${k}\u0000${v}\u0000`;
    if (key.length > MEMO_MAX_KEY) return undefined;
  }
  return key;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

function parseUncached(annotations: Annotations): ParseResult {
  const optIn = readOptIn(annotations);
  if (optIn === 'absent' || optIn === 'off') return { optIn, ok: true, config: null };
  const a = annotations ?? {};
  const problems: Problem[] = [];
  if (optIn === 'invalid') problems.push({ key: KEYS.enabled, value: a[KEYS.enabled], allowed: '"true" or "false"' });

  const paused = parseBool(a, KEYS.paused, problems);
  const standardRollingUpdate = parseBool(a, KEYS.standardRollingUpdate, problems);
  const respectPdb = parseBool(a, KEYS.respectPdb, problems, true);
  const ints = {} as Record<keyof typeof INTEGER_BOUNDS, number>;
  for (const [name, b] of Object.entries(INTEGER_BOUNDS) as [keyof typeof INTEGER_BOUNDS, (typeof INTEGER_BOUNDS)[keyof typeof INTEGER_BOUNDS]][]) {
    ints[name] = parseInteger(a, b.key, b.min, b.max, b.default, problems);
  }
  const httpGates = parseHttpGates(a, problems);
  const policyRefs = parsePolicyRefs(a, problems);
  const gates = parseGates(a, standardRollingUpdate || httpGates.length > 0 || policyRefs.length > 0, problems);
  const compareGates = parseCompareGates(a, problems);
  const count = gates.length + httpGates.length + compareGates.length;
  if (count > MAX_GATES) problems.push({ key: `${PREFIX}query.*, ${HTTP_PREFIX}*, ${COMPARE_PREFIX}*`, value: `${count} gates`, allowed: `at most ${MAX_GATES} gates in all` });
  const dryRun = parseDryRun(a, [...gates, ...httpGates, ...compareGates].map((g) => g.name), problems);
  // A comparison needs pods on both revisions: the first step and the final check (and a rollout with no
  // revision to compare with) are judged by the other gates, so at least one must be enforced.
  // With policies these rules are checked once they are read (src/policies/merge.ts): they may bring the gate.
  const all = [...gates, ...httpGates, ...compareGates];
  if (dryRun.length > 0 && policyRefs.length === 0 && all.every((g) => dryRun.includes(g.name))) {
    problems.push({ key: KEYS.dryRun, value: a[KEYS.dryRun], allowed: 'some of the gates, not all: at least one gate must stay enforced' });
  }
  if (compareGates.length > 0 && !standardRollingUpdate && policyRefs.length === 0 && ![...gates, ...httpGates].some((g) => !dryRun.includes(g.name))) {
    problems.push({ key: `${COMPARE_PREFIX}*`, value: compareGates.map((g) => g.name).join(','), allowed: `a comparison gate together with at least one phased-rollout.io/query or http.<name> gate that is not dry-run: it judges the first step and the last pod, where no pods of the other revision are left to compare with` });
  }
  const httpSecret = parseSecretName(a, KEYS.httpSecret, problems);
  const prometheusUrl = parseUrl(a, problems);
  const prometheusSecret = parseSecretName(a, KEYS.prometheusSecret, problems);
  const notify = parseSecretName(a, KEYS.notify, problems);
  const steps = parseSteps(a, problems);
  const promote = parsePromote(a, problems);
  const abort = parseRevision(a, KEYS.abort, problems);
  const retry = parseRetry(a, problems);
  const onFailure = parseOnFailure(a, problems);
  const group = parseGroup(a, problems);
  rejectUnknownKeys(a, problems);

  if (problems.length > 0) return { optIn, ok: false, problems };
  const config: RolloutConfig = { ...ints, gates, httpGates, compareGates, jobGates: [], hooks: [], dryRun, policyRefs, paused, standardRollingUpdate, respectPdb, onFailure };
  if (httpSecret !== undefined) config.httpSecret = httpSecret;
  if (prometheusUrl !== undefined) config.prometheusUrl = prometheusUrl;
  if (prometheusSecret !== undefined) config.prometheusSecret = prometheusSecret;
  if (notify !== undefined) config.notify = notify;
  if (steps !== undefined) config.steps = steps;
  if (promote !== undefined) config.promote = promote;
  if (abort !== undefined) config.abort = abort;
  if (retry !== undefined) config.retry = retry;
  if (group !== undefined) config.group = group;
  return { optIn, ok: true, config };
}

/** formatProblems renders problems as one line each: `key: "value" (allowed: ...)`. */
export function formatProblems(problems: Problem[]): string {
  return problems
    .map((p) => `${p.key}: ${p.value === undefined ? 'missing' : JSON.stringify(truncate(p.value, 80))} (allowed: ${p.allowed})`)
    .join('; ');
}

function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n)}...`;
}

function parseBool(a: Record<string, string | undefined>, key: string, problems: Problem[], dflt = false): boolean {
  const v = a[key];
  if (v === undefined) return dflt;
  if (v === 'false') return false;
  if (v === 'true') return true;
  problems.push({ key, value: v, allowed: '"true" or "false"' });
  return false;
}

// Strict decimal digits only: "1e3", " 5", "+5", "5.0" and "0x10" are all rejected rather than guessed.
const DECIMAL = /^(0|[1-9][0-9]{0,9})$/;

function parseInteger(a: Record<string, string | undefined>, key: string, min: number, max: number, dflt: number, problems: Problem[]): number {
  const v = a[key];
  if (v === undefined) return dflt;
  const n = DECIMAL.test(v) ? Number(v) : NaN;
  if (Number.isInteger(n) && n >= min && n <= max) return n;
  problems.push({ key, value: v, allowed: `an integer from ${min} to ${max}` });
  return dflt;
}

// A named gate's name: a DNS label, so it reads well in status and Events.
export const GATE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * parseGates reads `query` and every `query.<name>`: each a non-empty PromQL text whose placeholders
 * (src/rollout/gates.ts) are known and stand inside quoted label values. At least one is required
 * unless the gate is bypassed.
 */
function parseGates(a: Record<string, string | undefined>, bypass: boolean, problems: Problem[]): GateTemplate[] {
  const keys = Object.keys(a)
    .filter((k) => k === KEYS.query || k.startsWith(QUERY_PREFIX))
    .sort();
  if (keys.length === 0) {
    // The bypass needs no gate, so no query; every gated rollout does.
    if (!bypass) problems.push({ key: KEYS.query, value: undefined, allowed: 'a PromQL expression, or one or more phased-rollout.io/query.<name> or phased-rollout.io/http.<name>, or gate policies in phased-rollout.io/gates (required unless standard-rolling-update is "true")' });
    return [];
  }
  const gates: GateTemplate[] = [];
  for (const key of keys) {
    const v = a[key] ?? '';
    const name = key.slice(PREFIX.length);
    if (key !== KEYS.query && !GATE_NAME.test(key.slice(QUERY_PREFIX.length))) {
      problems.push({ key, value: v, allowed: 'a gate name after "query." of lowercase letters, digits and "-" (at most 63), e.g. phased-rollout.io/query.latency' });
      continue;
    }
    const bad = queryProblem(v);
    if (bad) {
      problems.push({ key, value: v, allowed: bad });
      continue;
    }
    gates.push({ name, query: v });
  }
  return gates;
}

function parseHttpGates(a: Record<string, string | undefined>, problems: Problem[]): HttpGateTemplate[] {
  const gates: HttpGateTemplate[] = [];
  for (const key of Object.keys(a).filter((k) => k.startsWith(HTTP_PREFIX)).sort()) {
    const v = a[key] ?? '';
    if (!GATE_NAME.test(key.slice(HTTP_PREFIX.length))) {
      problems.push({ key, value: v, allowed: 'a gate name after "http." of lowercase letters, digits and "-" (at most 63), e.g. phased-rollout.io/http.consul' });
      continue;
    }
    const bad = urlProblem(v);
    if (bad) {
      problems.push({ key, value: v, allowed: `an http(s) URL: ${bad}` });
      continue;
    }
    gates.push({ name: key.slice(PREFIX.length), url: v });
  }
  return gates;
}

/** queryProblem says what a gate's PromQL must be (the allowed text), or undefined when it is fine. */
export function queryProblem(v: string): string | undefined {
  if (v.trim() === '' || v.length > MAX_QUERY_LENGTH) return `a non-empty PromQL expression of at most ${MAX_QUERY_LENGTH} characters`;
  const bad = placeholderProblem(v);
  return bad ? `a PromQL expression: ${bad}` : undefined;
}

/** compareQueryProblem is queryProblem for a comparison gate, which must select one revision's pods with {{revision}}. */
export function compareQueryProblem(v: string): string | undefined {
  if (v.trim() === '' || v.length > MAX_QUERY_LENGTH || !/\{\{\s*revision\s*\}\}/.test(v)) {
    return `a PromQL expression of at most ${MAX_QUERY_LENGTH} characters that selects one revision's pods with {{revision}}, e.g. rate(http_errors_total{controller_revision_hash="{{revision}}"}[5m])`;
  }
  // {{pod}} and {{ordinal}} name the pod at the partition, a pod of one revision only: the other side
  // would select nothing, and the comparison would stay inconclusive for ever.
  if (/\{\{\s*(pod|ordinal)\s*\}\}/.test(v)) return 'a PromQL expression that selects the pods of one revision: {{pod}} and {{ordinal}} name one pod, the same on both sides; use {{revision}}';
  return queryProblem(v);
}

/**
 * parseCompareGates reads every `compare.<name>` (a PromQL expression that names {{revision}}, so that it
 * selects one revision's pods) and its `compare.<name>.criteria`.
 */
function parseCompareGates(a: Record<string, string | undefined>, problems: Problem[]): CompareTemplate[] {
  const gates: CompareTemplate[] = [];
  const keys = Object.keys(a).filter((k) => k.startsWith(COMPARE_PREFIX));
  for (const key of keys.filter((k) => !k.endsWith(CRITERIA_SUFFIX)).sort()) {
    const v = a[key] ?? '';
    if (!GATE_NAME.test(key.slice(COMPARE_PREFIX.length))) {
      problems.push({ key, value: v, allowed: 'a gate name after "compare." of lowercase letters, digits and "-" (at most 63), e.g. phased-rollout.io/compare.errors' });
      continue;
    }
    const bad = compareQueryProblem(v);
    if (bad) {
      problems.push({ key, value: v, allowed: bad });
      continue;
    }
    const criteria = parseCriteria(a[key + CRITERIA_SUFFIX]);
    if (typeof criteria === 'string') {
      problems.push({ key: key + CRITERIA_SUFFIX, value: a[key + CRITERIA_SUFFIX], allowed: `${CRITERIA_HELP} (${criteria})` });
      continue;
    }
    gates.push({ name: key.slice(PREFIX.length), query: v, criteria });
  }
  // Criteria of no comparison gate: a typo in the gate's name, named rather than ignored.
  for (const key of keys.filter((k) => k.endsWith(CRITERIA_SUFFIX)).sort()) {
    if (a[key.slice(0, -CRITERIA_SUFFIX.length)] === undefined) problems.push({ key, value: a[key], allowed: `criteria of a comparison gate: ${key.slice(0, -CRITERIA_SUFFIX.length)} is missing` });
  }
  return gates;
}

/** MAX_POLICY_REFS bounds the policies one StatefulSet references. */
export const MAX_POLICY_REFS = 10;
/** POLICY_REF is one reference: a RolloutGate name (a DNS subdomain), or `cluster/` and a ClusterRolloutGate name. */
const POLICY_REF = /^(cluster\/)?[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** parsePolicyRefs reads `phased-rollout.io/gates`: comma-separated policy references, each once. */
function parsePolicyRefs(a: Record<string, string | undefined>, problems: Problem[]): string[] {
  const v = a[KEYS.gates];
  if (v === undefined) return [];
  const refs = v.split(',').map((x) => x.trim()).filter(Boolean);
  if (refs.length === 0 || refs.length > MAX_POLICY_REFS || refs.some((r) => !POLICY_REF.test(r)) || new Set(refs).size !== refs.length) {
    problems.push({ key: KEYS.gates, value: v, allowed: `comma-separated names of RolloutGate policies in this namespace, or cluster/<name> for a ClusterRolloutGate, each once, at most ${MAX_POLICY_REFS}, e.g. "etcd-quorum, cluster/slo"` });
    return [];
  }
  return refs;
}

/** parseDryRun reads the dry-run list: gate names as the status shows them, each naming a gate of this StatefulSet. */
function parseDryRun(a: Record<string, string | undefined>, names: string[], problems: Problem[]): string[] {
  const v = a[KEYS.dryRun];
  if (v === undefined) return [];
  const listed = v.split(',').map((x) => x.trim()).filter(Boolean);
  const unknown = listed.filter((n) => !names.includes(n));
  if (listed.length === 0 || unknown.length > 0) {
    problems.push({ key: KEYS.dryRun, value: v, allowed: `comma-separated names of this StatefulSet's gates (${names.join(', ') || 'none'})${unknown.length > 0 ? `; no gate named ${unknown.join(', ')}` : ''}` });
    return [];
  }
  return [...new Set(listed)];
}

function parseUrl(a: Record<string, string | undefined>, problems: Problem[]): string | undefined {
  const v = a[KEYS.prometheusUrl];
  if (v === undefined) return undefined;
  const allowed = 'an http(s) base URL without credentials, query or /api/v1/query, e.g. http://prometheus.monitoring:9090';
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    problems.push({ key: KEYS.prometheusUrl, value: v, allowed });
    return undefined;
  }
  // Credentials in the URL would end up in logs and status; they belong in the prometheus-secret.
  const bad =
    (u.protocol !== 'http:' && u.protocol !== 'https:') ||
    u.username !== '' ||
    u.password !== '' ||
    u.search !== '' ||
    u.hash !== '' ||
    /\/api\/v1(\/query)?\/?$/.test(u.pathname);
  if (bad) {
    problems.push({ key: KEYS.prometheusUrl, value: v, allowed });
    return undefined;
  }
  return v.replace(/\/+$/, '');
}

const STEP_COUNT = /^[1-9][0-9]{0,5}$/;
const STEP_PERCENT = /^([1-9][0-9]?|100)%$/;

/**
 * parseSteps reads `phased-rollout.io/steps`: comma-separated cumulative targets, each a pod count
 * ("1") or a percentage of replicas ("10%"), counts increasing among counts and percentages among
 * percentages, ending with "100%" so that a rollout always reaches every pod whatever the replica count.
 * A `pause` marker before a stage makes the rollout wait there for `kubectl phased-rollout promote`.
 * Counts and percentages are compared only once replicas are known (src/rollout/steps.ts): a stage
 * that adds no pod at that size is skipped (its pause moves to the next stage).
 */
function parseSteps(a: Record<string, string | undefined>, problems: Problem[]): Step[] | undefined {
  const v = a[KEYS.steps];
  if (v === undefined) return undefined;
  const allowed = `comma-separated cumulative pod counts or percentages, increasing, ending with 100%, with optional "pause" markers between them (at most ${MAX_STEPS} stages), e.g. "1,pause,10%,50%,100%"`;
  const items = v.split(',').map((x) => x.trim());
  const steps: Step[] = [];
  let lastCount = 0;
  let lastPercent = 0;
  let pause = false;
  const refuse = () => {
    problems.push({ key: KEYS.steps, value: v, allowed });
    return undefined;
  };
  for (const item of items) {
    if (item === 'pause') {
      if (pause) return refuse();
      pause = true;
      continue;
    }
    let step: Step;
    if (STEP_COUNT.test(item) && Number(item) > lastCount) {
      lastCount = Number(item);
      step = { count: lastCount };
    } else if (STEP_PERCENT.test(item) && Number(item.slice(0, -1)) > lastPercent) {
      lastPercent = Number(item.slice(0, -1));
      step = { percent: lastPercent };
    } else return refuse();
    if (pause) step.pause = true;
    pause = false;
    steps.push(step);
  }
  if (steps.length > MAX_STEPS || items[items.length - 1] !== '100%') return refuse();
  return steps;
}

// A ControllerRevision name (a DNS subdomain) and a stage number, or "@" a partition "@" a hold's start.
const PROMOTE = /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)(\/([1-9][0-9]{0,2})|@(0|[1-9][0-9]{0,5})@([1-9][0-9]{0,14}))$/;
const REVISION = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

function parseRevision(a: Record<string, string | undefined>, key: string, problems: Problem[]): string | undefined {
  const v = a[key];
  if (v === undefined) return undefined;
  if (REVISION.test(v)) return v;
  problems.push({ key, value: v, allowed: 'a revision name (status.updateRevision), as `kubectl phased-rollout abort` writes it' });
  return undefined;
}

function parseOnFailure(a: Record<string, string | undefined>, problems: Problem[]): 'halt' | 'rollback' {
  const v = a[KEYS.onFailure];
  if (v === undefined || v === 'halt') return 'halt';
  if (v === 'rollback') return 'rollback';
  problems.push({ key: KEYS.onFailure, value: v, allowed: '"halt" or "rollback"' });
  return 'halt';
}

function parsePromote(a: Record<string, string | undefined>, problems: Problem[]): RolloutConfig['promote'] {
  const v = a[KEYS.promote];
  if (v === undefined) return undefined;
  const m = PROMOTE.exec(v);
  if (m) return m[4] !== undefined ? { revision: m[1] ?? '', stage: Number(m[4]) } : { revision: m[1] ?? '', partition: Number(m[5]), hold: Number(m[6]) };
  problems.push({ key: KEYS.promote, value: v, allowed: '<revision>/<step> or <revision>@<partition>@<hold>, as `kubectl phased-rollout promote` writes it' });
  return undefined;
}

// A revision name, "@", and the failure's time in ms since the epoch.
const RETRY = /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)@([1-9][0-9]{0,14})$/;

function parseRetry(a: Record<string, string | undefined>, problems: Problem[]): RolloutConfig['retry'] {
  const v = a[KEYS.retry];
  if (v === undefined) return undefined;
  const m = RETRY.exec(v);
  if (m) return { revision: m[1] ?? '', failedAt: Number(m[3]) };
  problems.push({ key: KEYS.retry, value: v, allowed: '<revision>@<failed at>, as `kubectl phased-rollout retry` writes it' });
  return undefined;
}

function parseGroup(a: Record<string, string | undefined>, problems: Problem[]): string | undefined {
  const v = a[KEYS.group];
  if (v === undefined) {
    if (a[KEYS.groupOrder] !== undefined) problems.push({ key: KEYS.groupOrder, value: a[KEYS.groupOrder], allowed: `only together with ${KEYS.group}` });
    return undefined;
  }
  if (GATE_NAME.test(v)) return v;
  problems.push({ key: KEYS.group, value: v, allowed: 'a group name of lowercase letters, digits and "-" (at most 63), shared by the StatefulSets of one namespace that roll one at a time' });
  return undefined;
}

// RFC 1123 subdomain, the rule for Secret names.
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function parseSecretName(a: Record<string, string | undefined>, key: string, problems: Problem[]): string | undefined {
  const v = a[key];
  if (v === undefined) return undefined;
  if (v.length <= 253 && SUBDOMAIN.test(v)) return v;
  problems.push({ key, value: v, allowed: 'a Secret name in the same namespace (lowercase RFC 1123 subdomain)' });
  return undefined;
}

const KNOWN = new Set<string>(Object.values(KEYS));

// A misspelt key (`phased-rollout.io/perod-seconds`) would otherwise be silently ignored and the
// default used; in our own prefix we know every key, so we name the typo instead.
function rejectUnknownKeys(a: Record<string, string | undefined>, problems: Problem[]): void {
  for (const key of Object.keys(a).sort()) {
    if (key.startsWith(PREFIX) && !KNOWN.has(key) && !key.startsWith(QUERY_PREFIX) && !key.startsWith(HTTP_PREFIX) && !key.startsWith(COMPARE_PREFIX)) {
      problems.push({ key, value: a[key], allowed: `no such key; known keys are ${[...KNOWN].map((k) => k.slice(PREFIX.length)).join(', ')}, query.<name>, http.<name>, compare.<name>, compare.<name>.criteria` });
    }
  }
}
