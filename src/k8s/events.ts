// Kubernetes Events on the StatefulSet, aggregated: a repeat of the same reason and message bumps the
// count of the existing Event instead of creating another (what `kubectl describe` shows as "x5 over").
import { CoreV1Api, PatchStrategy, setHeaderOptions, type ConfigurationOptions, type CoreV1Event } from '@kubernetes/client-node';
import type { Logger } from '../runtime/logger.js';
import { apiErrorMessage } from './errors.js';

/** EventTarget is the object an Event is about. */
export interface EventTarget {
  namespace: string;
  name: string;
  uid: string;
}

/** EventRecorder emits aggregated Events; failures are logged, never thrown (Events are best effort). */
export class EventRecorder {
  private readonly seen = new Map<string, { name: string; count: number }>();
  constructor(
    private readonly core: CoreV1Api,
    private readonly log: Logger,
    private readonly instance: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** emit records one Event; `options` carries the caller's deadline. */
  async emit(t: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string, options?: ConfigurationOptions): Promise<void> {
    const key = `${t.namespace}/${t.name}/${t.uid}/${type}/${reason}/${message}`;
    const when = this.now();
    const known = this.seen.get(key);
    try {
      if (known) {
        known.count++;
        await this.core.patchNamespacedEvent(
          { name: known.name, namespace: t.namespace, body: { count: known.count, lastTimestamp: when.toISOString() } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch, options),
        );
        return;
      }
      const name = `${t.name}.${when.getTime().toString(16)}${Math.floor(Math.random() * 0xffff).toString(16)}`;
      const body: CoreV1Event = {
        metadata: { name, namespace: t.namespace },
        involvedObject: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: t.name, namespace: t.namespace, uid: t.uid },
        type,
        reason,
        message: message.slice(0, 1024),
        count: 1,
        firstTimestamp: when,
        lastTimestamp: when,
        source: { component: 'phased-rollout-controller' },
        reportingComponent: 'phased-rollout.io/controller',
        reportingInstance: this.instance,
      };
      await this.core.createNamespacedEvent({ namespace: t.namespace, body }, options);
      this.seen.set(key, { name, count: 1 });
      if (this.seen.size > 10_000) this.seen.delete(this.seen.keys().next().value as string);
    } catch (err) {
      // The Event may have expired (1 h TTL) under a remembered name: forget it and carry on.
      this.seen.delete(key);
      this.log.warn({ reason: apiErrorMessage(err), event: reason, namespace: t.namespace, name: t.name }, 'cannot record Event');
    }
  }
}
