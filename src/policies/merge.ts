// A StatefulSet's own gates and those of the policies it references (phased-rollout.io/gates) as one
// configuration: every gate of every policy joins (all must pass), named `<reference>/<gate>`; a
// setting the StatefulSet's annotations leave out comes from its policies, the strictest one winning.
import { INTEGER_BOUNDS, MAX_GATES, type RolloutConfig } from '../annotations.js';
import { TIMING, type GatePolicy, type TimingKey } from './policy.js';

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
export function withPolicies(cfg: RolloutConfig, annotations: Record<string, string>, found: PolicyLookup): RolloutConfig | PolicyProblem {
  const policies: { ref: string; policy: GatePolicy }[] = [];
  for (const ref of cfg.policyRefs) {
    const p = found[ref];
    if (!p) return { problem: `gate policy ${describeRef(ref)} (phased-rollout.io/gates) not found; the rollout holds until it exists` };
    if ('problem' in p) return { ...p, problem: `gate policy ${describeRef(ref)} (phased-rollout.io/gates) cannot be used: ${p.problem}; the rollout holds until it is fixed` };
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
  for (const key of TIMING) {
    if (annotations[INTEGER_BOUNDS[key].key] !== undefined) continue; // the StatefulSet says
    const values = policies.flatMap(({ policy }) => (policy.timing[key] !== undefined ? [policy.timing[key]] : []));
    if (values.length > 0) out[key] = strictest(key, values);
  }
  const count = out.gates.length + out.httpGates.length + out.compareGates.length + out.jobGates.length;
  if (count > MAX_GATES) return { problem: `${count} gates with the policies of phased-rollout.io/gates; at most ${MAX_GATES} in all` };
  const enforced = [...out.gates, ...out.httpGates, ...out.jobGates].some((g) => !out.dryRun.includes(g.name));
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
