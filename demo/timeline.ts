// What the demo prints at the end: the controller's Events of one StatefulSet as a timeline, and how
// long each release took. Pure, so its shape is tested without a cluster.

/** DemoEvent is what the timeline needs of a Kubernetes Event. */
export interface DemoEvent {
  reason: string;
  message: string;
  /** When it last happened (an aggregated Event counts several). */
  at: number;
  count: number;
}

/** OURS are the controller's Event reasons worth showing (the StatefulSet controller's own are left out). */
const OURS = new Set(['RolloutStarted', 'PartitionLowered', 'CheckFailed', 'PrometheusError', 'GateError', 'RolloutCompleted', 'RolloutFailed', 'RollbackStarted', 'RolledBack', 'RolloutQueued', 'RolloutResumed', 'RolloutPaused', 'StrandedPodDeleted']);

/** timeline renders the controller's Events, oldest first, with seconds since `startMs`. */
export function timeline(events: readonly DemoEvent[], startMs: number): string[] {
  return [...events]
    .filter((e) => OURS.has(e.reason))
    .sort((a, b) => a.at - b.at)
    .map((e) => `  +${Math.max(0, Math.round((e.at - startMs) / 1000)).toString().padStart(4)}s  ${e.reason.padEnd(17)} ${e.message}${e.count > 1 ? ` (x${e.count}, last shown)` : ''}`);
}

/** stepsOf counts the partition steps among the Events. */
export function stepsOf(events: readonly DemoEvent[]): number {
  return events.filter((e) => e.reason === 'PartitionLowered').reduce((n, e) => n + e.count, 0);
}

/** seconds formats a duration in ms as seconds with one decimal. */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
