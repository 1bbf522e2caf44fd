// The dashboard's live model: list+watch of StatefulSets, of their pods (those with a
// controller-revision-hash) and of Events about StatefulSets, in one namespace or all, with the user's
// kubeconfig. A change anywhere rebuilds the cards (plugin/dashboard/model.ts), at most every 100 ms.
// A watch that fails is started again with backoff, so the page survives an API server restart.
import { AppsV1Api, CoreV1Api, makeInformer, type Informer, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { apiErrorMessage } from '../../src/k8s/errors.js';
import { buildModel, type Card, type EventObj, type PodObj, type StsObj } from './model.js';
import type { Source } from './server.js';

/** watchCluster starts the informers; resolves once each has listed (or failed and is retrying). */
export async function watchCluster(kc: KubeConfig, namespace: string | undefined, warn: (line: string) => void): Promise<Source & { stop(): Promise<void> }> {
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const ns = namespace ? `/namespaces/${namespace}` : '';
  const podSel = 'controller-revision-hash';
  const evSel = 'involvedObject.kind=StatefulSet';
  const informers: [string, Informer<KubernetesObject> & { list(): readonly KubernetesObject[] }][] = [
    ['statefulsets', makeInformer(kc, `/apis/apps/v1${ns}/statefulsets`, () => (namespace ? apps.listNamespacedStatefulSet({ namespace }) : apps.listStatefulSetForAllNamespaces()))],
    ['pods', makeInformer(kc, `/api/v1${ns}/pods`, () => (namespace ? core.listNamespacedPod({ namespace, labelSelector: podSel }) : core.listPodForAllNamespaces({ labelSelector: podSel })), podSel)],
    // makeInformer takes no field selector: the watch gets it in its path, the list as a parameter.
    ['events', makeInformer(kc, `/api/v1${ns}/events?fieldSelector=${encodeURIComponent(evSel)}`, () => (namespace ? core.listNamespacedEvent({ namespace, fieldSelector: evSel }) : core.listEventForAllNamespaces({ fieldSelector: evSel })))],
  ];
  const listeners = new Set<() => void>();
  let timer: NodeJS.Timeout | undefined;
  let cached: Card[] | undefined;
  let stopped = false;
  const changed = () => {
    cached = undefined;
    clearTimeout(timer);
    timer = setTimeout(() => {
      for (const l of listeners) l();
    }, 100);
  };
  const started = informers.map(([what, inf]) => {
    let backoff = 500;
    for (const ev of ['add', 'update', 'delete'] as const) inf.on(ev, changed);
    inf.on('connect', () => (backoff = 500));
    inf.on('error', (err) => {
      if (stopped) return;
      warn(`watch of ${what} failed (${apiErrorMessage(err)}); starting it again in ${backoff / 1000}s`);
      setTimeout(() => void inf.start(), backoff);
      backoff = Math.min(backoff * 2, 10_000);
    });
    return inf.start();
  });
  await Promise.all(started);
  const list = (i: number) => informers[i]![1].list();
  return {
    cards() {
      cached ??= buildModel(list(0) as StsObj[], list(1) as PodObj[], list(2) as EventObj[]);
      return cached;
    },
    onChange(cb) {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.all(informers.map(([, inf]) => inf.stop()));
    },
  };
}
