// The per-StatefulSet notification target: the Secret named by phased-rollout.io/notify. Like the
// Prometheus credentials, only a Secret labelled for the purpose is used, so that whoever may edit a
// StatefulSet cannot make the controller read any Secret of the namespace.
import type { ConfigurationOptions, CoreV1Api } from '@kubernetes/client-node';
import { NOTIFY_FORMATS, type NotifyFormat } from '../rollout/notify.js';
import { readLabelledSecret } from './secrets.js';

/** NOTIFY_TARGET_LABEL must be "true" on a Secret used as a notification target. */
export const NOTIFY_TARGET_LABEL = 'phased-rollout.io/notify-target';

/** loadNotifyTarget reads `url` (and optional `format`: json or slack) from the Secret; throws with a reason. */
export async function loadNotifyTarget(core: CoreV1Api, namespace: string, name: string, options?: ConfigurationOptions): Promise<{ url: string; format: NotifyFormat }> {
  const d = await readLabelledSecret(core, namespace, name, NOTIFY_TARGET_LABEL, (reason) => new Error(reason), options);
  const url = d.url?.trim();
  if (!url || !/^https?:\/\//.test(url)) throw new Error(`Secret ${namespace}/${name} has no http(s) url key`);
  const format = d.format?.trim() || 'json';
  if (!(NOTIFY_FORMATS as readonly string[]).includes(format)) throw new Error(`Secret ${namespace}/${name}: format must be one of ${NOTIFY_FORMATS.join(', ')}`);
  return { url, format: format as NotifyFormat };
}
