// The primitive readers of single annotation values (booleans, integers, the Prometheus URL, Secret
// names), and how their problems read; each adds a Problem and returns a default rather than throwing.

import { KEYS } from './keys.js';
import type { Problem } from './types.js';

/** formatProblems renders problems as one line each: `key: "value" (allowed: ...)`. */
export function formatProblems(problems: Problem[]): string {
  return problems
    .map((p) => `${p.key}: ${p.value === undefined ? 'missing' : JSON.stringify(truncate(p.value, 80))} (allowed: ${p.allowed})`)
    .join('; ');
}

function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n)}...`;
}

/** parseBool reads a "true"/"false" annotation; absent gives the default. */
export function parseBool(a: Record<string, string | undefined>, key: string, problems: Problem[], dflt = false): boolean {
  const v = a[key];
  if (v === undefined) return dflt;
  if (v === 'false') return false;
  if (v === 'true') return true;
  problems.push({ key, value: v, allowed: '"true" or "false"' });
  return false;
}

// Strict decimal digits only: "1e3", " 5", "+5", "5.0" and "0x10" are all rejected rather than guessed.
const DECIMAL = /^(0|[1-9][0-9]{0,9})$/;

/** parseInteger reads a decimal integer annotation within [min, max]; absent gives the default. */
export function parseInteger(a: Record<string, string | undefined>, key: string, min: number, max: number, dflt: number, problems: Problem[]): number {
  const v = a[key];
  if (v === undefined) return dflt;
  const n = DECIMAL.test(v) ? Number(v) : NaN;
  if (Number.isInteger(n) && n >= min && n <= max) return n;
  problems.push({ key, value: v, allowed: `an integer from ${min} to ${max}` });
  return dflt;
}

/** parseUrl reads `phased-rollout.io/prometheus-url`: an http(s) base URL, returned without trailing slashes. */
export function parseUrl(a: Record<string, string | undefined>, problems: Problem[]): string | undefined {
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

/** parseSecretName reads an annotation that names a Secret in the same namespace. */
export function parseSecretName(a: Record<string, string | undefined>, key: string, problems: Problem[]): string | undefined {
  const v = a[key];
  if (v === undefined) return undefined;
  if (v.length <= 253 && SUBDOMAIN.test(v)) return v;
  problems.push({ key, value: v, allowed: 'a Secret name in the same namespace (lowercase RFC 1123 subdomain)' });
  return undefined;
}
