// client-node's informer stops for good on any watch error other than 410 Gone; this wrapper restarts
// it with exponential backoff, so a flaky API server or a dropped connection never silently freezes
// the controller's view of the cluster.
import { makeInformer, type KubeConfig, type KubernetesObject, type ListPromise } from '@kubernetes/client-node';
import type { Logger } from '../runtime/logger.js';
import { apiErrorMessage } from './errors.js';

/** WatchEvent is what the callback receives. */
export type WatchEvent = 'add' | 'update' | 'delete';

/** ResilientInformer is a list+watch cache that restarts itself. */
export interface ResilientInformer<T extends KubernetesObject> {
  /** start lists, begins watching, and resolves once the first list is in the cache. */
  start(): Promise<void>;
  stop(): Promise<void>;
  get(name: string, namespace?: string): T | undefined;
  list(namespace?: string): ReadonlyArray<T>;
  synced(): boolean;
}

/** resilientInformer builds a restarting informer for `path`, calling `onEvent` for every change. */
export function resilientInformer<T extends KubernetesObject>(
  kc: KubeConfig,
  path: string,
  listFn: ListPromise<T>,
  log: Logger,
  onEvent: (type: WatchEvent, obj: T) => void,
  opts: { labelSelector?: string; baseBackoffMs?: number; maxBackoffMs?: number } = {},
): ResilientInformer<T> {
  const informer = makeInformer<T>(kc, path, listFn, opts.labelSelector);
  let stopped = false;
  let isSynced = false;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;
  informer.on('add', (o) => onEvent('add', o));
  informer.on('update', (o) => onEvent('update', o));
  informer.on('delete', (o) => onEvent('delete', o));
  informer.on('connect', () => {
    failures = 0;
  });
  informer.on('error', (err) => {
    if (stopped) return;
    const wait = Math.min((opts.baseBackoffMs ?? 500) * 2 ** failures++, opts.maxBackoffMs ?? 30_000);
    log.warn({ path, reason: apiErrorMessage(err), retryInMs: wait }, 'watch failed; restarting informer');
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (stopped) return;
      informer.start().catch((e: Error) => log.warn({ path, reason: e.message }, 'informer restart failed'));
    }, wait);
    timer.unref();
  });
  return {
    async start() {
      await informer.start();
      isSynced = true;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await informer.stop();
    },
    get: (name, namespace) => informer.get(name, namespace),
    list: (namespace) => informer.list(namespace),
    synced: () => isSynced,
  };
}
