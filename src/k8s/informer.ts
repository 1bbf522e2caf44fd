// client-node's informer stops for good on any watch error other than 410 Gone; this wrapper restarts
// it with exponential backoff, so a flaky API server or a dropped connection never silently freezes
// the controller's view of the cluster. Two more gaps of client-node 2.0.1 are closed here:
// - `ListWatch.start()` resolves even when the list failed (it only calls the error callbacks), so
//   the first list is tracked here and `start()` rejects when it failed: an empty cache is never
//   reported as synced.
// - its `connect` callback fires before every attempt, successful or not, so it cannot tell a
//   healthy watch: the backoff resets only on a successful list or a delivered event.
import { makeInformer, type KubeConfig, type KubernetesObject, type ListPromise } from '@kubernetes/client-node';
import type { Logger } from '../runtime/logger.js';
import { realTimers, type Timers } from '../runtime/queue.js';
import { backoffMs } from './backoff.js';
import { apiErrorMessage } from './errors.js';
import { listInPages, type PagedList } from './list-pages.js';

/** WatchEvent is what the callback receives. */
export type WatchEvent = 'add' | 'update' | 'delete';

/** ResilientInformer is a list+watch cache that restarts itself. */
export interface ResilientInformer<T extends KubernetesObject> {
  /** start lists and begins watching; it rejects when the first list fails. */
  start(): Promise<void>;
  stop(): Promise<void>;
  get(name: string, namespace?: string): T | undefined;
  list(namespace?: string): ReadonlyArray<T>;
  /** synced: the first list is in the cache. */
  synced(): boolean;
  /** live: synced, and no watch error since the last successful (re)start: the cache follows the server. */
  live(): boolean;
  /** indexed lists the objects whose `indexBy` key is `key` (empty without indexBy): O(result), not O(cache). */
  indexed(key: string): ReadonlyArray<T>;
}

/** InformerOptions tune the selector and the restart backoff; timers are injectable for tests. */
export interface InformerOptions<T extends KubernetesObject = KubernetesObject> {
  labelSelector?: string;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  timers?: Timers;
  /** Called before every watch request (client-node's `connect`), to count them. */
  onWatch?: () => void;
  /** An index key per object (e.g. the owning StatefulSet of a pod), kept up to date from the events. */
  indexBy?: (obj: T) => string | undefined;
  /** Trims a cached object in place to what the controller reads (the cache keeps the trimmed one). */
  slim?: (obj: T) => void;
  /** List in pages of this many objects (the list function gets `limit` and `_continue`), each trimmed as it arrives. */
  pageSize?: number;
}

export { backoffMs } from './backoff.js';

/** resilientInformer builds a restarting informer for `path`, calling `onEvent` for every change. */
export function resilientInformer<T extends KubernetesObject>(
  kc: KubeConfig,
  path: string,
  listFn: ListPromise<T> | PagedList<T>,
  log: Logger,
  onEvent: (type: WatchEvent, obj: T) => void,
  opts: InformerOptions<T> = {},
): ResilientInformer<T> {
  const timers = opts.timers ?? realTimers;
  let stopped = false;
  let listed = false;
  let isSynced = false;
  let isLive = false;
  let failures = 0;
  let errors = 0;
  let lastError: unknown;
  let timer: unknown;
  const trim = (o: T): void => {
    // client-node calls back with the very object it caches: dropping managedFields here shrinks the
    // cache (they are often the largest part of a pod or StatefulSet, and nothing here reads them), as
    // controller-runtime's default cache transform does.
    if (o.metadata?.managedFields) delete o.metadata.managedFields;
    opts.slim?.(o);
  };
  const tracked: ListPromise<T> = async () => {
    const list = opts.pageSize ? await listInPages(listFn as PagedList<T>, opts.pageSize, trim) : await (listFn as ListPromise<T>)();
    listed = true;
    failures = 0;
    return list;
  };
  const informer = makeInformer<T>(kc, path, tracked, opts.labelSelector);
  const index = new SecondaryIndex<T>(opts.indexBy);
  const event = (type: WatchEvent) => (o: T) => {
    failures = 0;
    trim(o);
    // client-node calls back after updating its cache, for list items as for watch events (and a
    // relist reports vanished objects as deletes), so the index follows the cache exactly.
    if (type === 'delete') index.remove(o);
    else index.put(o);
    onEvent(type, o);
  };
  informer.on('add', event('add'));
  informer.on('update', event('update'));
  informer.on('delete', event('delete'));
  if (opts.onWatch) informer.on('connect', opts.onWatch);

  /** attempt runs one (re)start; the cache is live when no error was reported during it. */
  const attempt = async (): Promise<void> => {
    const before = errors;
    await informer.start();
    if (errors === before && !stopped) isLive = true;
  };
  const scheduleRestart = (err: unknown): void => {
    const wait = backoffMs(++failures, opts.baseBackoffMs ?? 500, opts.maxBackoffMs ?? 30_000);
    log.warn({ path, reason: apiErrorMessage(err), retryInMs: wait, failures }, 'watch failed; restarting informer');
    timers.clear(timer);
    timer = timers.set(() => {
      if (stopped) return;
      attempt().catch((e: unknown) => log.warn({ path, reason: apiErrorMessage(e) }, 'informer restart failed'));
    }, wait);
  };
  informer.on('error', (err) => {
    errors++;
    lastError = err;
    isLive = false;
    if (!stopped && isSynced) scheduleRestart(err); // the first start reports its own failure
  });
  return {
    async start() {
      const before = errors;
      try {
        await attempt();
      } catch (e) {
        lastError = e;
      }
      if (!listed) {
        await informer.stop();
        throw lastError instanceof Error ? lastError : new Error(`cannot list ${path}: ${apiErrorMessage(lastError)}`);
      }
      isSynced = true;
      // The watch failed right after a good list: the cache is right as of the list; restart the watch
      // like any other watch failure.
      if (errors !== before && !stopped) scheduleRestart(lastError);
    },
    async stop() {
      stopped = true;
      isLive = false;
      timers.clear(timer);
      await informer.stop();
    },
    get: (name, namespace) => informer.get(name, namespace),
    list: (namespace) => informer.list(namespace),
    synced: () => isSynced,
    live: () => isSynced && isLive,
    indexed: (key) => index.get(key),
  };
}

/** SecondaryIndex maps an index key to the objects that have it, by namespace/name. */
export class SecondaryIndex<T extends KubernetesObject> {
  private readonly byKey = new Map<string, Map<string, T>>();
  private readonly keyOf = new Map<string, string>();

  constructor(private readonly indexBy?: (obj: T) => string | undefined) {}

  put(o: T): void {
    if (!this.indexBy) return;
    const id = `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
    const key = this.indexBy(o);
    const old = this.keyOf.get(id);
    if (old !== undefined && old !== key) this.drop(old, id);
    if (key === undefined) return void this.keyOf.delete(id);
    this.keyOf.set(id, key);
    let m = this.byKey.get(key);
    if (!m) this.byKey.set(key, (m = new Map()));
    m.set(id, o);
  }

  remove(o: T): void {
    const id = `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
    const old = this.keyOf.get(id);
    if (old === undefined) return;
    this.keyOf.delete(id);
    this.drop(old, id);
  }

  get(key: string): ReadonlyArray<T> {
    const m = this.byKey.get(key);
    return m ? [...m.values()] : [];
  }

  private drop(key: string, id: string): void {
    const m = this.byKey.get(key);
    m?.delete(id);
    if (m && m.size === 0) this.byKey.delete(key);
  }
}
