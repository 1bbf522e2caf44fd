// Platform policies: a ClusterRolloutGate that selects namespaces (spec.namespaceSelector) applies to
// every opted-in StatefulSet there, named or not; with spec.enforce it also opts every StatefulSet
// there in and takes the ways out away. Pure: the webhook and the controller each read namespace
// labels and policies from their caches and ask these functions what applies.
import type { V1LabelSelector } from '@kubernetes/client-node';
import { KEYS, MAX_POLICY_REFS } from '../annotations.js';
import { selectorMatches } from '../k8s/selector.js';

/** PolicyScope is where a ClusterRolloutGate applies by itself, and whether it enforces there. */
export interface PolicyScope {
  namespaceSelector: V1LabelSelector;
  /** Every StatefulSet of a selected namespace is opted in; bypass, opt-out and dry-run of its gates are refused. */
  enforce: boolean;
  /**
   * With enforce, the largest step after the first (spec.maxStep: pods, or "N%" of the replicas); the
   * first step of a rollout is always one pod there.
   */
  maxStep?: { count: number } | { percent: number };
  /** With enforce, spec.onFailure: rollback makes every StatefulSet there roll back on failure, whatever it says. */
  onFailure?: 'rollback' | 'halt';
}

/** SelectedPolicy is a ClusterRolloutGate that selects a namespace: its reference (`cluster/<name>`) and whether it enforces. */
export interface SelectedPolicy {
  ref: string;
  enforce: boolean;
}

const OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);
// A label key: an optional DNS-subdomain prefix and a name of at most 63 (the API server's rule).
const LABEL_KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/**
 * parseScope reads spec.namespaceSelector and spec.enforce (problems pushed, as parsePolicySpec's). The
 * CRD refuses the same at the API server; this is the check for a CRD that is older or edited.
 */
export function parseScope(s: Record<string, unknown>, problems: string[]): PolicyScope | undefined {
  const sel = s.namespaceSelector;
  const enforce = s.enforce;
  if (enforce !== undefined && typeof enforce !== 'boolean') problems.push('spec.enforce: true or false');
  if (sel === undefined || sel === null) {
    if (enforce === true) problems.push('spec.enforce: needs spec.namespaceSelector (the namespaces it enforces in)');
    return undefined;
  }
  if (typeof sel !== 'object' || Array.isArray(sel)) return void problems.push('spec.namespaceSelector: a label selector (matchLabels, matchExpressions)');
  const { matchLabels, matchExpressions } = sel as Record<string, unknown>;
  const before = problems.length;
  if (matchLabels !== undefined) {
    if (!matchLabels || typeof matchLabels !== 'object' || Array.isArray(matchLabels)) problems.push('spec.namespaceSelector.matchLabels: a map of label keys to values');
    else for (const [k, v] of Object.entries(matchLabels)) if (!LABEL_KEY.test(k) || typeof v !== 'string' || !LABEL_VALUE.test(v)) problems.push(`spec.namespaceSelector.matchLabels: ${k}: a label key and value`);
  }
  if (matchExpressions !== undefined) {
    if (!Array.isArray(matchExpressions)) problems.push('spec.namespaceSelector.matchExpressions: a list');
    else
      matchExpressions.forEach((e: unknown, i) => {
        const at = `spec.namespaceSelector.matchExpressions[${i}]`;
        const x = (e && typeof e === 'object' ? e : {}) as Record<string, unknown>;
        if (typeof x.key !== 'string' || !LABEL_KEY.test(x.key)) return void problems.push(`${at}.key: a label key`);
        if (typeof x.operator !== 'string' || !OPERATORS.has(x.operator)) return void problems.push(`${at}.operator: In, NotIn, Exists or DoesNotExist`);
        const values = x.values ?? [];
        const set = x.operator === 'In' || x.operator === 'NotIn';
        if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) return void problems.push(`${at}.values: a list of strings`);
        if (set !== values.length > 0) problems.push(`${at}.values: ${set ? 'at least one value for In and NotIn' : 'none for Exists and DoesNotExist'}`);
      });
  }
  if (problems.length > before) return undefined;
  // An empty selector would select every namespace of the cluster, kube-system included: a platform team
  // that means it says so with an expression (e.g. kubernetes.io/metadata.name NotIn [kube-system]).
  const terms = Object.keys((matchLabels as object | undefined) ?? {}).length + ((matchExpressions as unknown[] | undefined) ?? []).length;
  if (terms === 0) return void problems.push('spec.namespaceSelector: at least one of matchLabels or matchExpressions (an empty selector would select every namespace)');
  const limits = enforcedLimits(s, enforce === true, problems);
  if (problems.length > before) return undefined;
  return { namespaceSelector: sel as V1LabelSelector, enforce: enforce === true, ...limits };
}

/** enforcedLimits reads spec.maxStep and spec.onFailure, which only an enforcing policy may set. */
function enforcedLimits(s: Record<string, unknown>, enforce: boolean, problems: string[]): Pick<PolicyScope, 'maxStep' | 'onFailure'> {
  const out: Pick<PolicyScope, 'maxStep' | 'onFailure'> = {};
  const { maxStep, onFailure } = s;
  if ((maxStep !== undefined || onFailure !== undefined) && !enforce) problems.push('spec.maxStep and spec.onFailure: only with spec.enforce (they bound the rollouts the policy enforces on)');
  if (typeof maxStep === 'number' && Number.isInteger(maxStep) && maxStep >= 1 && maxStep <= 10_000) out.maxStep = { count: maxStep };
  else if (typeof maxStep === 'string' && /^([1-9][0-9]?|100)%$/.test(maxStep)) out.maxStep = { percent: Number(maxStep.slice(0, -1)) };
  else if (maxStep !== undefined) problems.push('spec.maxStep: a number of pods (1-10000) or a percent of the replicas ("1%"-"100%")');
  if (onFailure === 'rollback' || onFailure === 'halt') out.onFailure = onFailure;
  else if (onFailure !== undefined) problems.push('spec.onFailure: rollback or halt');
  return out;
}

/**
 * selectedPolicies lists the ClusterRolloutGates whose namespaceSelector selects a namespace with these
 * labels, by name. A policy the controller refuses still counts when its scope could be read: a typo
 * elsewhere in it must hold the StatefulSets it selects (they report it), never free them.
 */
export function selectedPolicies(labels: Record<string, string> | undefined, policies: Iterable<{ name: string; scope: PolicyScope | undefined }>): SelectedPolicy[] {
  const out: SelectedPolicy[] = [];
  for (const p of policies) if (p.scope && selectorMatches(p.scope.namespaceSelector, labels ?? {})) out.push({ ref: `cluster/${p.name}`, enforce: p.scope.enforce });
  return out.sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
}

/** namedRefs are the references a StatefulSet writes in phased-rollout.io/gates itself (unchecked). */
export function namedRefs(annotations: Record<string, string | undefined>): string[] {
  return (annotations[KEYS.gates] ?? '').split(',').map((x) => x.trim()).filter(Boolean);
}

/** enforcing names the first enforcing policy of a selection, or undefined. */
export function enforcing(selected: readonly SelectedPolicy[]): SelectedPolicy | undefined {
  return selected.find((p) => p.enforce);
}

/**
 * effectiveAnnotations are a StatefulSet's annotations as the selected policies make them: each one
 * joins phased-rollout.io/gates (once: a policy named there already is not added again), and under an
 * enforcing policy the StatefulSet is opted in (an absent or "false" `enabled` reads "true") and
 * standard-rolling-update is ignored. Both processes decide on these, so a StatefulSet that existed
 * before the policy (no annotation at all) is judged like one the webhook admitted. Returns the same
 * object when nothing changes.
 */
export function effectiveAnnotations(annotations: Record<string, string>, selected: readonly SelectedPolicy[]): Record<string, string> {
  if (selected.length === 0) return annotations;
  const named = namedRefs(annotations);
  const added = selected.map((p) => p.ref).filter((r) => !named.includes(r));
  const out = { ...annotations };
  // Selected policies must not make a team's annotation invalid by passing its limit of references
  // (MAX_POLICY_REFS): the parser is shown at most that many; withPolicies applies every selected
  // policy all the same (it joins the selection to the references).
  if (added.length > 0) out[KEYS.gates] = [...named, ...added].slice(0, Math.max(MAX_POLICY_REFS, named.length)).join(',');
  if (enforcing(selected)) {
    if (out[KEYS.enabled] === undefined || out[KEYS.enabled] === 'false') out[KEYS.enabled] = 'true';
    delete out[KEYS.standardRollingUpdate];
  }
  return out;
}
