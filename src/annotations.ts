// The annotation contract of SPEC §2: every key, default, range and message lives here, and both the
// webhook and the controller parse through `parseAnnotations` so they can never disagree on a default.

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
  status: `${PREFIX}status`,
} as const;

/** INTEGER_BOUNDS holds the defaults and inclusive ranges of the integer annotations. */
export const INTEGER_BOUNDS = {
  initialDelaySeconds: { key: KEYS.initialDelaySeconds, min: 0, max: 86400, default: 30 },
  periodSeconds: { key: KEYS.periodSeconds, min: 1, max: 86400, default: 30 },
  successThreshold: { key: KEYS.successThreshold, min: 1, max: 1000, default: 3 },
  failureThreshold: { key: KEYS.failureThreshold, min: 0, max: 1000, default: 0 },
} as const;

/** MAX_QUERY_LENGTH bounds the PromQL text: it travels in a URL query string on every check. */
export const MAX_QUERY_LENGTH = 8192;

/** RolloutConfig is the typed, defaulted form of an opted-in StatefulSet's annotations. */
export interface RolloutConfig {
  query?: string;
  prometheusUrl?: string;
  initialDelaySeconds: number;
  periodSeconds: number;
  successThreshold: number;
  failureThreshold: number;
  prometheusSecret?: string;
  paused: boolean;
  standardRollingUpdate: boolean;
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
  const optIn = readOptIn(annotations);
  if (optIn === 'absent' || optIn === 'off') return { optIn, ok: true, config: null };
  const a = annotations ?? {};
  const problems: Problem[] = [];
  if (optIn === 'invalid') problems.push({ key: KEYS.enabled, value: a[KEYS.enabled], allowed: '"true" or "false"' });

  const paused = parseBool(a, KEYS.paused, problems);
  const standardRollingUpdate = parseBool(a, KEYS.standardRollingUpdate, problems);
  const ints = {} as Record<keyof typeof INTEGER_BOUNDS, number>;
  for (const [name, b] of Object.entries(INTEGER_BOUNDS) as [keyof typeof INTEGER_BOUNDS, (typeof INTEGER_BOUNDS)[keyof typeof INTEGER_BOUNDS]][]) {
    ints[name] = parseInteger(a, b.key, b.min, b.max, b.default, problems);
  }
  const query = parseQuery(a, standardRollingUpdate, problems);
  const prometheusUrl = parseUrl(a, problems);
  const prometheusSecret = parseSecretName(a, problems);
  rejectUnknownKeys(a, problems);

  if (problems.length > 0) return { optIn, ok: false, problems };
  const config: RolloutConfig = { ...ints, paused, standardRollingUpdate };
  if (query !== undefined) config.query = query;
  if (prometheusUrl !== undefined) config.prometheusUrl = prometheusUrl;
  if (prometheusSecret !== undefined) config.prometheusSecret = prometheusSecret;
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

function parseBool(a: Record<string, string | undefined>, key: string, problems: Problem[]): boolean {
  const v = a[key];
  if (v === undefined || v === 'false') return false;
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

function parseQuery(a: Record<string, string | undefined>, bypass: boolean, problems: Problem[]): string | undefined {
  const v = a[KEYS.query];
  if (v === undefined) {
    // The bypass needs no gate, so no query; every gated rollout does.
    if (!bypass) problems.push({ key: KEYS.query, value: undefined, allowed: 'a PromQL expression (required unless standard-rolling-update is "true")' });
    return undefined;
  }
  if (v.trim() === '' || v.length > MAX_QUERY_LENGTH) {
    problems.push({ key: KEYS.query, value: v, allowed: `a non-empty PromQL expression of at most ${MAX_QUERY_LENGTH} characters` });
    return undefined;
  }
  return v;
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

// RFC 1123 subdomain, the rule for Secret names.
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function parseSecretName(a: Record<string, string | undefined>, problems: Problem[]): string | undefined {
  const v = a[KEYS.prometheusSecret];
  if (v === undefined) return undefined;
  if (v.length <= 253 && SUBDOMAIN.test(v)) return v;
  problems.push({ key: KEYS.prometheusSecret, value: v, allowed: 'a Secret name in the same namespace (lowercase RFC 1123 subdomain)' });
  return undefined;
}

const KNOWN = new Set<string>(Object.values(KEYS));

// A misspelt key (`phased-rollout.io/perod-seconds`) would otherwise be silently ignored and the
// default used; in our own prefix we know every key, so we name the typo instead.
function rejectUnknownKeys(a: Record<string, string | undefined>, problems: Problem[]): void {
  for (const key of Object.keys(a).sort()) {
    if (key.startsWith(PREFIX) && !KNOWN.has(key)) {
      problems.push({ key, value: a[key], allowed: `no such key; known keys are ${[...KNOWN].map((k) => k.slice(PREFIX.length)).join(', ')}` });
    }
  }
}
