// Prometheus credentials from the Secret named by phased-rollout.io/prometheus-secret. Only a Secret
// labelled phased-rollout.io/prometheus-credentials=true is used: whoever may edit a StatefulSet must not
// be able to send any Secret of the namespace to a URL of their choice.
import type { ConfigurationOptions, CoreV1Api } from '@kubernetes/client-node';
import type { Credentials } from '../prometheus/client.js';
import { apiErrorCode } from './errors.js';

/** CREDENTIALS_LABEL must be "true" on a Secret used for Prometheus credentials. */
export const CREDENTIALS_LABEL = 'phased-rollout.io/prometheus-credentials';

/** CredentialsError explains why a Secret was not used; its message never contains secret data. */
export class CredentialsError extends Error {}

const decode = (v: string | undefined) => (v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8'));

/** loadCredentials reads and checks the Secret; throws CredentialsError with a reason a user can act on. */
export async function loadCredentials(core: CoreV1Api, namespace: string, name: string, options?: ConfigurationOptions): Promise<Credentials> {
  let secret;
  try {
    secret = await core.readNamespacedSecret({ name, namespace }, options);
  } catch (err) {
    const code = apiErrorCode(err);
    throw new CredentialsError(code === 404 ? `Secret ${namespace}/${name} not found` : code === 403 ? `not allowed to read Secret ${namespace}/${name}` : `cannot read Secret ${namespace}/${name}`);
  }
  if (secret.metadata?.labels?.[CREDENTIALS_LABEL] !== 'true') {
    throw new CredentialsError(`Secret ${namespace}/${name} is not labelled ${CREDENTIALS_LABEL}: "true"; refusing to use it`);
  }
  const d = secret.data ?? {};
  const c: Credentials = {};
  const token = decode(d.token)?.trim();
  if (token) c.token = token;
  else if (d.username !== undefined) {
    c.username = decode(d.username) ?? '';
    c.password = decode(d.password) ?? '';
  }
  const ca = decode(d['ca.crt']);
  if (ca) c.ca = ca;
  if (!c.token && c.username === undefined && !c.ca) throw new CredentialsError(`Secret ${namespace}/${name} has none of the keys token, username/password, ca.crt`);
  return c;
}
