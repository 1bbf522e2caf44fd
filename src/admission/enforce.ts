// What an enforcing ClusterRolloutGate (spec.enforce: true, src/policies/scope.ts) refuses at
// admission: the ways a StatefulSet of a selected namespace could leave the policy. Pure; decide.ts
// turns a refusal into a denial that names the policy.
import { KEYS } from '../annotations.js';
import { enforcing, type SelectedPolicy } from '../policies/scope.js';

/** Refusal says which policy refuses what (the rest of a sentence after "ClusterRolloutGate <name> enforces ...: "). */
export interface Refusal {
  policy: string;
  what: string;
}

/**
 * enforcementRefusal finds the first way out the annotations try: opting out with "false", bypassing
 * with standard-rolling-update, or a dry-run naming the policy's gates. An absent `enabled` is no
 * refusal: the webhook puts it back (a server-side apply of a manifest without it removes it on every
 * apply; refusing would refuse every apply), so it cannot be removed either.
 */
export function enforcementRefusal(annotations: Record<string, string>, selected: readonly SelectedPolicy[]): Refusal | undefined {
  const by = enforcing(selected);
  if (!by) return undefined;
  const policy = by.ref.slice('cluster/'.length);
  if (annotations[KEYS.enabled] === 'false') return { policy, what: `${KEYS.enabled} cannot be "false" here` };
  if (annotations[KEYS.standardRollingUpdate] === 'true') return { policy, what: `${KEYS.standardRollingUpdate} cannot be "true" here` };
  const enforced = selected.filter((p) => p.enforce).map((p) => `${p.ref}/`);
  const dry = (annotations[KEYS.dryRun] ?? '').split(',').map((x) => x.trim()).filter((n) => enforced.some((r) => n.startsWith(r)));
  if (dry.length > 0) {
    const of = selected.find((p) => p.enforce && dry[0]?.startsWith(`${p.ref}/`))?.ref.slice('cluster/'.length) ?? policy;
    return { policy: of, what: `its gates cannot be dry-run (${KEYS.dryRun}: ${dry.join(',')})` };
  }
  return undefined;
}
