// Secrets named in annotations (Prometheus credentials, notification targets): only a Secret that
// carries the purpose's label is read, so whoever may edit a StatefulSet cannot make the controller use
// any Secret of the namespace. Error messages name the Secret and never its data.
import type { ConfigurationOptions, CoreV1Api } from '@kubernetes/client-node';
import { apiErrorCode } from './errors.js';

/** readLabelledSecret returns the decoded data of a Secret labelled `label: "true"`; throws `make(reason)`. */
export async function readLabelledSecret(core: CoreV1Api, namespace: string, name: string, label: string, make: (reason: string) => Error, options?: ConfigurationOptions): Promise<Record<string, string>> {
  let secret;
  try {
    secret = await core.readNamespacedSecret({ name, namespace }, options);
  } catch (err) {
    const code = apiErrorCode(err);
    throw make(code === 404 ? `Secret ${namespace}/${name} not found` : code === 403 ? `not allowed to read Secret ${namespace}/${name}` : `cannot read Secret ${namespace}/${name}`);
  }
  if (secret.metadata?.labels?.[label] !== 'true') throw make(`Secret ${namespace}/${name} is not labelled ${label}: "true"; refusing to use it`);
  return Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}
