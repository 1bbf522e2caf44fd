// Every text a user sees from the webhook, in one place so the docs can quote them and tests can hold
// them to the API server's limits.
import { formatProblems, KEYS, PREFIX, type Problem } from '../annotations.js';

/** MAX_WARNING_LENGTH is the API server's advice for a warning; longer ones may be cut or dropped. */
export const MAX_WARNING_LENGTH = 120;

/** warning clips a text to MAX_WARNING_LENGTH so no caller can exceed it. */
export function warning(text: string): string {
  return text.length <= MAX_WARNING_LENGTH ? text : `${text.slice(0, MAX_WARNING_LENGTH - 3)}...`;
}

// Warnings do not name the object: kubectl prints them next to the object it applied, and a name of up
// to 253 characters would push the useful part past the limit.

/** pinnedOnCreate is the warning of SPEC §3 row 7. */
export const pinnedOnCreate = (partition: number): string =>
  warning(`phased-rollout: rollout gated, partition pinned to ${partition}; progress in annotation ${KEYS.status}`);

/** pinnedNewRevision is the warning of SPEC §3 row 8. */
export const pinnedNewRevision = (partition: number): string =>
  warning(`phased-rollout: change pinned at partition ${partition}; pods roll one at a time after health checks, see ${KEYS.status}`);

/** optOutPending is the warning of SPEC §3 row 2 when a rollout was in flight. */
export const optOutPending = (partition: number): string =>
  warning(`phased-rollout: opted out mid-rollout; partition is left at ${partition}, lower it yourself to finish`);

/** objectName renders `namespace/name` for messages (generateName shows as `prefix*`). */
export function objectName(namespace: string | undefined, name: string | undefined, generateName?: string): string {
  const n = name || (generateName ? `${generateName}*` : '<unnamed>');
  return namespace ? `${namespace}/${n}` : n;
}

/** invalidAnnotations is the denial of SPEC §3 row 4. */
export const invalidAnnotations = (obj: string, problems: Problem[]): string =>
  `phased-rollout: StatefulSet ${obj} has invalid annotations: ${formatProblems(problems)}`;

/** onDeleteRefused is the denial of SPEC §3 row 5. */
export const onDeleteRefused = (obj: string): string =>
  `phased-rollout: StatefulSet ${obj} uses updateStrategy OnDelete, which cannot be gated; use RollingUpdate or remove the ${KEYS.enabled} annotation`;

/** partitionManaged is the denial of SPEC §3 row 9 (text fixed by the SPEC). */
export const partitionManaged = (obj: string, current: number): string =>
  `phased-rollout: partition of StatefulSet ${obj} is managed by phased-rollout (currently ${current}); remove it from your manifest, or use ${KEYS.paused} or ${KEYS.standardRollingUpdate}`;

/** partitionKept is the warning of SPEC §3 row 9 when a PUT omitted the partition (defaulted to 0). */
export const partitionKept = (partition: number): string => warning(`phased-rollout: partition is managed by phased-rollout; kept at ${partition}`);

/** scaledMidRollout is the warning when replicas grow while a rollout holds part of the pods back. */
export const scaledMidRollout = (partition: number): string =>
  warning(`phased-rollout: scaled mid-rollout; partition raised to ${partition} so new pods start on the current revision`);

/** statusManaged is the denial of an edit to the status annotation by anyone but the controller. */
export const statusManaged = (obj: string): string =>
  `phased-rollout: annotation ${KEYS.status} of StatefulSet ${obj} is written by the phased-rollout controller only; remove it from your manifest (a write without it keeps it; to retry a Failed rollout: kubectl phased-rollout retry)`;

/** statusKept is the warning when a user's write dropped the status annotation and the webhook put it back. */
export const statusKept = (): string =>
  warning(`phased-rollout: ${KEYS.status} kept (the controller's record); to retry: kubectl phased-rollout retry`);

/** statusOnOptIn is the denial of an opt-in that carries a status annotation the controller did not write. */
export const statusOnOptIn = (obj: string): string =>
  `phased-rollout: StatefulSet ${obj} is being opted in with annotation ${KEYS.status} already set; only the phased-rollout controller writes it, and not while a StatefulSet is opted out: remove the annotation (an exported manifest or a restored backup carries an old one)`;

/** MAX_KEYS_NAMED bounds the annotation keys one denial names (a request may change hundreds). */
const MAX_KEYS_NAMED = 5;

/** annotationsThroughStatus is the denial of a change of phased-rollout.io/ annotations through statefulsets/status. */
export function annotationsThroughStatus(obj: string, keys: string[]): string {
  const named = keys.slice(0, MAX_KEYS_NAMED).join(', ') + (keys.length > MAX_KEYS_NAMED ? ` and ${keys.length - MAX_KEYS_NAMED} more` : '');
  return (
    `phased-rollout: annotation${keys.length === 1 ? '' : 's'} ${named} of StatefulSet ${obj} cannot be changed through the status subresource; ` +
    `${PREFIX} annotations are set on the StatefulSet itself (kubectl annotate, or kubectl patch without --subresource), where they are checked`
  );
}

/** malformedObject explains an object whose shape the API would never store. */
export const malformedObject = (obj: string, why: string): string => `phased-rollout: StatefulSet ${obj} cannot be admitted: ${why}`;

/** policiesUnknown denies while the webhook's caches cannot tell which ClusterRolloutGates enforce in a namespace. */
export const policiesUnknown = (obj: string, reason: string): string =>
  `phased-rollout: cannot admit StatefulSet ${obj} yet: ${reason}, so whether a ClusterRolloutGate enforces gated rollouts in its namespace is unknown; retry in a few seconds`;

/** enforcedRefusal denies a way out of an enforcing ClusterRolloutGate (bypass, opt-out, dry-run of its gates). */
export const enforcedRefusal = (obj: string, policy: string, what: string): string =>
  `phased-rollout: StatefulSet ${obj}: ClusterRolloutGate ${policy} enforces gated rollouts in namespace ${obj.split('/')[0]}: ${what}; ask the platform team that owns ClusterRolloutGate ${policy} for an exception`;

/** enforcedOptIn is the warning when the webhook adds phased-rollout.io/enabled under an enforcing policy. */
export const enforcedOptIn = (policy: string): string =>
  // The policy's name first: a warning is clipped to MAX_WARNING_LENGTH (the API server's advice).
  warning(`phased-rollout: opted in by ClusterRolloutGate ${policy}, which enforces gated rollouts here`);
