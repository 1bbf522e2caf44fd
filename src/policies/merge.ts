// A StatefulSet's own gates and those of the policies it references (phased-rollout.io/gates) or that
// select its namespace (src/policies/scope.ts) as one configuration: every gate of every policy joins
// (all must pass), named `<reference>/<gate>`; a setting the StatefulSet's annotations leave out comes
// from its policies, the strictest one winning. A platform policy's settings are floors the annotations
// can only make stricter, and its Prometheus gates go to the operator's Prometheus.
import { INTEGER_BOUNDS, MAX_GATES, type RolloutConfig } from '../annotations.js';
import { TIMING, type GatePolicy, type TimingKey } from './policy.js';
import type { SelectedPolicy } from './scope.js';
import { mergeCheckpoints } from '../checkpoints/spec.js';

/**
 * PolicyLookup is what the shell found for each reference: the checked policy, or why there is none to
 * use; `transient` when the caches cannot tell yet (not listed, or the watch is down): the rollout
 * waits, writing nothing, rather than reporting a policy missing that may well exist.
 */
export type PolicyLookup = Record<string, GatePolicy | PolicyProblem>;

/** PolicyProblem says why the policies cannot be used now. */
export interface PolicyProblem {
  problem: string;
  transient?: true;
}

/** describeRef names a reference for a person: `RolloutGate etcd-quorum` or `ClusterRolloutGate slo`. */
export function describeRef(ref: string): string {
  return ref.startsWith('cluster/') ? `ClusterRolloutGate ${ref.slice('cluster/'.length)}` : `RolloutGate ${ref}`;
}

/** MergeOptions: the policies that select the StatefulSet's namespace, and whether the controller has a --prometheus-url. */
export interface MergeOptions {
  selected?: readonly SelectedPolicy[];
  /** The references the StatefulSet wrote itself (cfg.policyRefs may hold selected ones too); cfg.policyRefs when absent. */
  named?: readonly string[];
  operatorPrometheus?: boolean;
}

/** howApplied says why a policy applies, for messages: named, or selecting (enforcing) the namespace. */
export function howApplied(ref: string, named: readonly string[], selected: readonly SelectedPolicy[]): string {
  const s = selected.find((p) => p.ref === ref);
  if (!s) return 'phased-rollout.io/gates';
  const by = s.enforce ? 'enforced on this namespace by its namespaceSelector' : 'it selects this namespace';
  return named.includes(ref) ? `phased-rollout.io/gates; ${by}` : by;
}

/**
 * Which value of a setting is the strictest: the longest wait and the most passes (each makes a step
 * observe longer), and the fewest fails, errors or inconclusive checks before acting (0 means never,
 * so it counts only when every policy says 0).
 */
const LONGEST: ReadonlySet<TimingKey> = new Set(['initialDelaySeconds', 'periodSeconds', 'successThreshold']);

function strictest(key: TimingKey, values: number[]): number {
  if (LONGEST.has(key)) return Math.max(...values);
  const set = values.filter((v) => v > 0);
  return set.length > 0 ? Math.min(...set) : 0;
}

/**
 * withPolicies returns the configuration with the referenced policies in it, or the reason the rollout
 * must hold (a policy missing, refused or not readable yet, too many gates, a comparison with no
 * enforced gate beside it).
 */
export function withPolicies(cfg: RolloutConfig, annotations: Record<string, string>, found: PolicyLookup, opts: MergeOptions = {}): RolloutConfig | PolicyProblem {
  const selected = opts.selected ?? [];
  const own = opts.named ?? cfg.policyRefs;
  // A policy both named and selecting the namespace counts once.
  const refs = [...new Set([...cfg.policyRefs, ...selected.map((p) => p.ref)])];
  const policies: { ref: string; policy: GatePolicy }[] = [];
  for (const ref of refs) {
    const p = found[ref];
    const how = howApplied(ref, own, selected);
    if (!p) return { problem: `gate policy ${describeRef(ref)} (${how}) not found; the rollout holds until it exists` };
    if ('problem' in p) return { ...p, problem: `gate policy ${describeRef(ref)} (${how}) cannot be used: ${p.problem}; the rollout holds until it is fixed` };
    policies.push({ ref, policy: p });
  }
  const named = <T extends { name: string }>(ref: string, xs: readonly T[]) => xs.map((x) => ({ ...x, name: `${ref}/${x.name}` }));
  const out: RolloutConfig = {
    ...cfg,
    gates: [...cfg.gates, ...policies.flatMap(({ ref, policy }) => named(ref, policy.queries))],
    httpGates: [...cfg.httpGates, ...policies.flatMap(({ ref, policy }) => named(ref, policy.http))],
    compareGates: [...cfg.compareGates, ...policies.flatMap(({ ref, policy }) => named(ref, policy.compare))],
    jobGates: [...cfg.jobGates, ...policies.flatMap(({ ref, policy }) => named(ref, policy.jobs))],
    hooks: [...cfg.hooks, ...policies.flatMap(({ ref, policy }) => named(ref, policy.hooks ?? []))],
    dryRun: [...cfg.dryRun, ...policies.flatMap(({ ref, policy }) => policy.dryRun.map((n) => `${ref}/${n}`))],
  };
  const analysisGates = [...(cfg.analysisGates ?? []), ...policies.flatMap(({ ref, policy }) => (policy.analysis ? [{ name: `${ref}/analysis`, ref: policy.analysis, ...(ref.startsWith('cluster/') ? { clusterOnly: true as const } : {}) }] : []))];
  // A ClusterRolloutGate's analysis names ClusterAnalysisTemplates only: a namespaced template is the
  // namespace's to edit, and would let a team rewrite the platform's gate.
  const local = policies.find(({ ref, policy }) => ref.startsWith('cluster/') && policy.analysis?.templates.some((t) => !t.clusterScope));
  if (local) return { problem: `gate policy ${describeRef(local.ref)} (${howApplied(local.ref, own, selected)}) cannot be used: spec.analysis.templates: a ClusterRolloutGate names ClusterAnalysisTemplates only (clusterScope: true); the rollout holds until it is fixed` };
  if (analysisGates.length > 0) out.analysisGates = analysisGates;
  // One checkpoint of every policy's (src/checkpoints/spec.ts): a platform's and a team's together.
  const checkpoint = mergeCheckpoints(policies.flatMap(({ ref, policy }) => (policy.checkpoint ? [{ ref, spec: policy.checkpoint }] : [])));
  if (checkpoint && 'problem' in checkpoint) return { problem: `${checkpoint.problem}; the rollout holds until they agree` };
  if (checkpoint) out.checkpoint = checkpoint;
  for (const key of TIMING) {
    // The StatefulSet's own value beats a named policy's, but a platform policy's is a floor.
    const says = annotations[INTEGER_BOUNDS[key].key] !== undefined;
    const values = policies.flatMap(({ policy }) => (policy.timing[key] !== undefined && (!says || policy.scope) ? [policy.timing[key]] : []));
    if (values.length > 0) out[key] = strictest(key, says ? [cfg[key], ...values] : values);
  }
  Object.assign(out, enforcedFloors(cfg, policies, selected));
  // A platform policy's queries and comparisons are measured by the platform's Prometheus: a URL or a
  // Secret the StatefulSet names would let a team answer its own platform's checks.
  const platform = policies.filter(({ policy }) => policy.scope);
  // An Argo analysis of a platform policy too: its Prometheus metrics go there, whatever address the template says.
  const operatorGates = platform.flatMap(({ ref, policy }) => [...named(ref, policy.queries), ...named(ref, policy.compare), ...(policy.analysis ? [{ name: `${ref}/analysis` }] : [])].map((g) => g.name));
  if (operatorGates.length > 0) {
    if (!opts.operatorPrometheus) {
      const first = platform.find(({ policy }) => policy.queries.length + policy.compare.length + (policy.analysis ? 1 : 0) > 0)?.ref ?? '';
      return { problem: `gate policy ${describeRef(first)} (${howApplied(first, own, selected)}) has Prometheus gates, which go only to the controller's own --prometheus-url, and the controller has none: they cannot be evaluated; the rollout holds until it is set` };
    }
    out.operatorGates = operatorGates;
  }
  // The platform's own queries may go without the tenant (spec.tenantScoped: false): only a
  // ClusterRolloutGate's, whoever could write a RolloutGate being the team itself.
  const unscoped = policies.filter(({ ref, policy }) => policy.unscoped && ref.startsWith('cluster/')).flatMap(({ ref, policy }) => [...named(ref, policy.queries), ...named(ref, policy.compare)].map((g) => g.name));
  if (unscoped.length > 0) out.unscopedGates = unscoped;
  const count = out.gates.length + out.httpGates.length + out.compareGates.length + out.jobGates.length + (out.analysisGates?.length ?? 0);
  if (count > MAX_GATES) return { problem: `${count} gates with the policies of phased-rollout.io/gates${selected.length > 0 ? ' and those that select this namespace' : ''}; at most ${MAX_GATES} in all` };
  const enforced = [...out.gates, ...out.httpGates, ...out.jobGates, ...(out.analysisGates ?? [])].some((g) => !out.dryRun.includes(g.name));
  if (!enforced) {
    return {
      problem:
        out.compareGates.length > 0
          ? 'a comparison gate needs at least one query, HTTP or Job gate that is not dry-run beside it (it judges the first step and the last pod); neither the annotations nor the policies have one'
          : 'every gate is dry-run: at least one must be enforced',
    };
  }
  return out;
}

/**
 * enforcedFloors: what an enforcing policy holds a team to beyond its gates. Its steps: the first step
 * of a rollout replaces one pod (a canary the platform's gates judge before more go), later ones at
 * most the policy's maxStep (steps: "100%" would otherwise pass the gates on old pods only, then
 * replace every pod at once). The PodDisruptionBudgets are always asked, and onFailure: rollback wins
 * over a team's halt. A team keeps its pauses and its promote, abort and retry: each only holds, goes
 * back, or asks the gates again (docs/analysis.md, For platform teams).
 */
function enforcedFloors(cfg: RolloutConfig, policies: { ref: string; policy: GatePolicy }[], selected: readonly SelectedPolicy[]): Partial<RolloutConfig> {
  const enforcing = policies.filter(({ ref, policy }) => policy.scope?.enforce && selected.some((p) => p.ref === ref && p.enforce));
  if (enforcing.length === 0) return {};
  // Every policy's ceiling holds (the smallest wins; a count and a percent are both honoured).
  const later = enforcing.flatMap(({ policy }) => (policy.scope?.maxStep ? [policy.scope.maxStep] : []));
  const rollback = enforcing.some(({ policy }) => policy.scope?.onFailure === 'rollback');
  return {
    stepCeiling: { first: 1, later },
    respectPdb: true,
    ...(rollback ? { onFailure: 'rollback' as const } : {}),
  };
}
