// Notifications: what a chat channel or a receiver hears about a rollout. Pure: which of a plan's
// actions are worth telling, and the JSON body of each. Delivery is src/runtime/notifier.ts.
import type { Action, RolloutStatus } from './types.js';

/** NotificationKind names what happened. */
export type NotificationKind = 'started' | 'step' | 'paused' | 'completed' | 'failed' | 'rolledBack';

/** NOTIFIED maps the Events that are told to the kind they are told as. */
const NOTIFIED: Record<string, NotificationKind> = {
  RolloutStarted: 'started',
  PartitionLowered: 'step',
  RolloutPaused: 'paused',
  RolloutCompleted: 'completed',
  RolloutFailed: 'failed',
  // A rollback begins because the rollout failed (gate, deadline or abort): that is the failure.
  RollbackStarted: 'failed',
  RolledBack: 'rolledBack',
};

/** Notification is one message, in the default JSON format. */
export interface Notification {
  kind: NotificationKind;
  namespace: string;
  statefulset: string;
  /** The Event reason it comes from, e.g. PartitionLowered. */
  reason: string;
  message: string;
  phase?: string;
  revision?: string;
  partition?: number;
  replicas?: number;
  updated?: number;
  failedRevision?: string;
  failureReason?: string;
  /** The pods a `step` released (merged steps: of every step), at most MAX_NAMED_PODS names. */
  pods?: string[];
  /** Pods released beyond the named ones ("and N more"). */
  morePods?: number;
  /** How many steps this message tells (merged steps: more than one). */
  steps?: number;
  time: string;
}

/** MAX_NAMED_PODS bounds the pod names in one message; merged steps stop there (a 1,000-pod rollout at 50 a message). */
export const MAX_NAMED_PODS = 50;

/** rolloutOf names the rollout a notification belongs to: one StatefulSet and revision. */
function rolloutOf(n: Notification): string {
  return `${n.namespace}/${n.statefulset}@${n.revision ?? ''}`;
}

/**
 * mergeSteps folds step `b` into step `a` of the same rollout (b came later), when both name their
 * pods and together they name at most MAX_NAMED_PODS; undefined otherwise. The merged message keeps
 * `a`'s time and takes `b`'s position (partition, updated): what the rollout looks like now.
 */
export function mergeSteps(a: Notification, b: Notification): Notification | undefined {
  if (a.kind !== 'step' || b.kind !== 'step' || rolloutOf(a) !== rolloutOf(b) || !a.pods || !b.pods || a.morePods || b.morePods) return undefined;
  const pods = [...a.pods, ...b.pods];
  if (pods.length > MAX_NAMED_PODS) return undefined;
  const steps = (a.steps ?? 1) + (b.steps ?? 1);
  const message = `${steps} steps: ${pods.join(', ')} rolled; partition now ${b.partition ?? '?'}`;
  return { ...b, pods, steps, message, time: a.time };
}

/** notificationsOf turns the Events among a plan's actions into notifications, in order. */
export function notificationsOf(target: { namespace: string; name: string }, actions: readonly Action[], nowMs: number): Notification[] {
  const status: RolloutStatus | undefined = actions.flatMap((a) => (a.type === 'writeStatus' ? [a.status] : []))[0];
  const out: Notification[] = [];
  for (const a of actions) {
    if (a.type !== 'event') continue;
    const kind = NOTIFIED[a.reason];
    if (!kind) continue;
    const n: Notification = { kind, namespace: target.namespace, statefulset: target.name, reason: a.reason, message: a.message, time: new Date(nowMs).toISOString() };
    if (a.pods) {
      n.pods = a.pods.slice(0, MAX_NAMED_PODS);
      if (a.pods.length > MAX_NAMED_PODS) {
        n.morePods = a.pods.length - MAX_NAMED_PODS;
        n.message = `${n.message}: ${n.pods.join(', ')} and ${n.morePods} more`;
      }
    }
    if (status) {
      Object.assign(n, { phase: status.phase, revision: status.revision, partition: status.partition, replicas: status.replicas, updated: status.updated });
      if (status.failedRevision) Object.assign(n, { failedRevision: status.failedRevision, failureReason: status.failureReason });
    }
    out.push(n);
  }
  return out;
}

/** NotifyFormat is the body shape: our JSON, or a Slack incoming-webhook message. */
export type NotifyFormat = 'json' | 'slack';

export const NOTIFY_FORMATS: readonly NotifyFormat[] = ['json', 'slack'];

const HEADLINE: Record<NotificationKind, string> = {
  started: 'rollout started',
  step: 'rollout step',
  paused: 'rollout paused',
  completed: 'rollout completed',
  failed: 'rollout failed',
  rolledBack: 'rolled back',
};

/** bodyOf renders a notification in a format. Slack's `text` is plain: mrkdwn control characters escaped. */
export function bodyOf(n: Notification, format: NotifyFormat): unknown {
  if (format === 'json') return n;
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const where = n.revision !== undefined ? ` (revision ${n.revision}, ${n.updated ?? 0}/${n.replicas ?? 0} pods updated)` : '';
  return { text: esc(`phased-rollout: ${n.namespace}/${n.statefulset}: ${HEADLINE[n.kind]}: ${n.message}${where}`) };
}
