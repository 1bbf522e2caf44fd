// The per-StatefulSet notification target: the Secret named by phased-rollout.io/notify. Like the
// Prometheus credentials, only a Secret labelled for the purpose is used, so that whoever may edit a
// StatefulSet cannot make the controller read any Secret of the namespace.
import type { ConfigurationOptions, CoreV1Api } from '@kubernetes/client-node';
import { NOTIFY_FORMATS, type NotifyFormat } from '../rollout/notify.js';
import { apiErrorCode } from './errors.js';

/** NOTIFY_TARGET_LABEL must be "true" on a Secret used as a notification target. */
export const NOTIFY_TARGET_LABEL = 'phased-rollout.io/notify-target';

const decode = (v: string | undefined) => (v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8').trim());

/** loadNotifyTarget reads `url` (and optional `format`: json or slack) from the Secret; throws with a reason. */
export async function loadNotifyTarget(core: CoreV1Api, namespace: string, name: string, options?: ConfigurationOptions): Promise<{ url: string; format: NotifyFormat }> {
  let secret;
  try {
    secret = await core.readNamespacedSecret({ name, namespace }, options);
  } catch (err) {
    const code = apiErrorCode(err);
    throw new Error(code === 404 ? `Secret ${namespace}/${name} not found` : code === 403 ? `not allowed to read Secret ${namespace}/${name}` : `cannot read Secret ${namespace}/${name}`);
  }
  if (secret.metadata?.labels?.[NOTIFY_TARGET_LABEL] !== 'true') throw new Error(`Secret ${namespace}/${name} is not labelled ${NOTIFY_TARGET_LABEL}: "true"; refusing to use it`);
  const url = decode(secret.data?.url);
  if (!url || !/^https?:\/\//.test(url)) throw new Error(`Secret ${namespace}/${name} has no http(s) url key`);
  const format = decode(secret.data?.format) ?? 'json';
  if (!(NOTIFY_FORMATS as readonly string[]).includes(format)) throw new Error(`Secret ${namespace}/${name}: format must be one of ${NOTIFY_FORMATS.join(', ')}`);
  return { url, format: format as NotifyFormat };
}
