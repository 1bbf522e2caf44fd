// The gates of an annotated StatefulSet: query, HTTP and comparison gates, the dry-run list and the
// gate policies it references; the PromQL checks here are shared with the policies (src/policies/).

import { CRITERIA_HELP, parseCriteria } from '../analysis/criteria.js';
import { placeholderProblem, urlProblem, type GateTemplate, type HttpGateTemplate } from '../gate-templates.js';
import { COMPARE_PREFIX, GATE_NAME, HTTP_PREFIX, KEYS, MAX_POLICY_REFS, MAX_QUERY_LENGTH, PREFIX, QUERY_PREFIX } from './keys.js';
import type { CompareTemplate, Problem } from './types.js';

const CRITERIA_SUFFIX = '.criteria';

/**
 * parseGates reads `query` and every `query.<name>`: each a non-empty PromQL text whose placeholders
 * (src/rollout/gates.ts) are known and stand inside quoted label values. At least one is required
 * unless the gate is bypassed.
 */
export function parseGates(a: Record<string, string | undefined>, bypass: boolean, problems: Problem[]): GateTemplate[] {
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

/** parseHttpGates reads every `http.<name>`: each an http(s) URL, in key order. */
export function parseHttpGates(a: Record<string, string | undefined>, problems: Problem[]): HttpGateTemplate[] {
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
export function parseCompareGates(a: Record<string, string | undefined>, problems: Problem[]): CompareTemplate[] {
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

/** POLICY_REF is one reference: a RolloutGate name (a DNS subdomain), or `cluster/` and a ClusterRolloutGate name. */
const POLICY_REF = /^(cluster\/)?[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** parsePolicyRefs reads `phased-rollout.io/gates`: comma-separated policy references, each once. */
export function parsePolicyRefs(a: Record<string, string | undefined>, problems: Problem[]): string[] {
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
export function parseDryRun(a: Record<string, string | undefined>, names: string[], problems: Problem[]): string[] {
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
