// Prometheus credentials from the Secret named by phased-rollout.io/prometheus-secret. Only a Secret
// labelled phased-rollout.io/prometheus-credentials=true is used: whoever may edit a StatefulSet must not
// be able to send any Secret of the namespace to a URL of their choice.
import type { ConfigurationOptions, CoreV1Api } from '@kubernetes/client-node';
import type { Credentials } from '../net/bounded-get.js';
import { readLabelledSecret } from './secrets.js';

/** CREDENTIALS_LABEL must be "true" on a Secret used for Prometheus credentials. */
export const CREDENTIALS_LABEL = 'phased-rollout.io/prometheus-credentials';

/** GATE_CREDENTIALS_LABEL must be "true" on a Secret named by phased-rollout.io/http-secret (HTTP gates). */
export const GATE_CREDENTIALS_LABEL = 'phased-rollout.io/gate-credentials';

/** CredentialsError explains why a Secret was not used; its message never contains secret data. */
export class CredentialsError extends Error {}

/** loadCredentials reads and checks the Secret; throws CredentialsError with a reason a user can act on. */
export async function loadCredentials(core: CoreV1Api, namespace: string, name: string, options?: ConfigurationOptions, label = CREDENTIALS_LABEL): Promise<Credentials> {
  const d = await readLabelledSecret(core, namespace, name, label, (reason) => new CredentialsError(reason), options);
  const c: Credentials = {};
  const token = d.token?.trim();
  if (token) c.token = token;
  else if (d.username !== undefined) {
    c.username = d.username;
    c.password = d.password ?? '';
  }
  if (d['ca.crt']) c.ca = d['ca.crt'];
  if (!c.token && c.username === undefined && !c.ca) throw new CredentialsError(`Secret ${namespace}/${name} has none of the keys token, username/password, ca.crt`);
  return c;
}
