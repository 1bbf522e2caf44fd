// parseAnnotations: the one entry point the webhook and the controller parse through. It reads every
// key with the readers of the files beside it, collects all problems, and memoises the result.

import { parseAnalysis } from './analysis.js';
import { parseCompareGates, parseDryRun, parseGates, parseHttpGates, parsePolicyRefs } from './gates.js';
import { COMPARE_PREFIX, HTTP_PREFIX, INTEGER_BOUNDS, KEYS, MAX_GATES, PREFIX, QUERY_PREFIX } from './keys.js';
import { parseGroup, parseOnFailure, parsePromote, parseRetry, parseRevision, parseSteps } from './rollout-control.js';
import type { OptIn, ParseResult, Problem, RolloutConfig } from './types.js';
import { parseBool, parseInteger, parseSecretName, parseUrl } from './values.js';

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
  const analysis = parseAnalysis(a, problems);
  const gates = parseGates(a, standardRollingUpdate || httpGates.length > 0 || policyRefs.length > 0 || analysis !== undefined, problems);
  const compareGates = parseCompareGates(a, problems);
  const count = gates.length + httpGates.length + compareGates.length + (analysis ? 1 : 0);
  if (count > MAX_GATES) problems.push({ key: `${PREFIX}query.*, ${HTTP_PREFIX}*, ${COMPARE_PREFIX}*`, value: `${count} gates`, allowed: `at most ${MAX_GATES} gates in all` });
  const dryRun = parseDryRun(a, [...gates, ...httpGates, ...compareGates, ...(analysis ? [analysis] : [])].map((g) => g.name), problems);
  // A comparison needs pods on both revisions: the first step and the final check (and a rollout with no
  // revision to compare with) are judged by the other gates, so at least one must be enforced.
  // With policies these rules are checked once they are read (src/policies/merge.ts): they may bring the gate.
  const all = [...gates, ...httpGates, ...compareGates, ...(analysis ? [analysis] : [])];
  if (dryRun.length > 0 && policyRefs.length === 0 && all.every((g) => dryRun.includes(g.name))) {
    problems.push({ key: KEYS.dryRun, value: a[KEYS.dryRun], allowed: 'some of the gates, not all: at least one gate must stay enforced' });
  }
  if (compareGates.length > 0 && !standardRollingUpdate && policyRefs.length === 0 && ![...gates, ...httpGates, ...(analysis ? [analysis] : [])].some((g) => !dryRun.includes(g.name))) {
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
  if (analysis) config.analysisGates = [analysis];
  return { optIn, ok: true, config };
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
