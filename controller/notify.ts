// Wires notifications: the --notify-url destinations for every StatefulSet, plus the Secret a
// StatefulSet names in phased-rollout.io/notify. Delivery runs in the background (src/runtime/notifier.ts).
import type { CoreV1Api } from '@kubernetes/client-node';
import type { EventTarget } from '../src/k8s/events.js';
import { withDeadline } from '../src/k8s/deadline.js';
import { loadNotifyTarget } from '../src/k8s/notify-target.js';
import { urlAllowed } from '../src/prometheus/allowed.js';
import { NOTIFY_FORMATS, type Notification, type NotifyFormat } from '../src/rollout/notify.js';
import type { Logger } from '../src/runtime/logger.js';
import type { ControllerMetrics } from '../src/runtime/metrics.js';
import { Notifier, type Destination, type Post } from '../src/runtime/notifier.js';

export interface NotifyConfig {
  urls: readonly string[];
  format: string;
  timeoutMs: number;
  requestTimeoutMs: number;
  /** At most one message per destination per this long (--notify-min-interval); default 1 s. */
  minIntervalMs?: number;
  /** --allowed-notify-urls: a Secret's target URL must fall under one (empty: any). */
  allowedUrls?: readonly string[];
}

/**
 * allowedTarget resolves a StatefulSet's notification Secret and refuses a URL outside
 * --allowed-notify-urls: whoever may label a Secret and edit a StatefulSet would otherwise make the
 * controller POST to any address it reaches (blind, but a request all the same). The URL is not echoed.
 */
export async function allowedTarget(load: () => Promise<{ url: string; format: NotifyFormat }>, allowed: readonly string[], what: string): Promise<{ url: string; format: NotifyFormat }> {
  const t = await load();
  if (!urlAllowed(t.url, allowed)) throw new Error(`${what}: its url is not under the controller's --allowed-notify-urls`);
  return t;
}

/** notifyConfigProblems lists what is wrong with the notification flags (checked at start-up). */
export function notifyConfigProblems(c: Pick<NotifyConfig, 'urls' | 'format'>): string[] {
  const problems: string[] = [];
  if (!(NOTIFY_FORMATS as readonly string[]).includes(c.format)) problems.push(`--notify-format: "${c.format}" (allowed: ${NOTIFY_FORMATS.join(', ')})`);
  c.urls.forEach((u, i) => {
    if (!/^https?:\/\/[^/]/.test(u)) problems.push(`--notify-url #${i + 1}: not an http(s) URL`); // never echo it: it may hold a token
  });
  return problems;
}

/** notifications builds the reconciler's notify hook and the notifier behind it. */
export function notifications(c: NotifyConfig, core: CoreV1Api, log: Logger, metrics: ControllerMetrics, post?: Post) {
  const notifier = new Notifier({ log, timeoutMs: c.timeoutMs, sent: metrics.notifications, ...(c.minIntervalMs !== undefined ? { minIntervalMs: c.minIntervalMs } : {}), ...(post ? { post } : {}) });
  const fixed: Destination[] = c.urls.map((url, i) => ({ key: `flag:${i + 1}`, resolve: async () => ({ url, format: c.format as NotifyFormat }) }));
  const notify = (t: EventTarget, secret: string | undefined, ns: Notification[]) => {
    const dests = [...fixed];
    if (secret) {
      const load = () => loadNotifyTarget(core, t.namespace, secret, withDeadline(c.requestTimeoutMs));
      dests.push({ key: `secret:${t.namespace}/${secret}`, resolve: () => allowedTarget(load, c.allowedUrls ?? [], `Secret ${t.namespace}/${secret}`) });
    }
    for (const d of dests) for (const n of ns) notifier.notify(d, n);
  };
  return { notifier, notify };
}
