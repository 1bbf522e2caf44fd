// The status key (--status-key-secret NAMESPACE/NAME): read from its Secret at start, or made there
// when the Secret does not exist yet (a fresh install), so every replica seals with the same key and a
// restart reads what it sealed. Made by the controller rather than by the chart, so that no install
// path (helm template, the kustomize base rendered from the chart, a GitOps tool that replays the
// manifests) ever writes a key into a manifest or gives two installs the same one.
import { randomBytes } from 'node:crypto';
import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import { apiErrorCode } from '../src/k8s/errors.js';
import { parseStatusKeys, type StatusKeys } from '../src/rollout/status-seal.js';

/** STATUS_KEY_BYTES: the size of a key the controller makes (HMAC-SHA256's block is 64; 32 is its output). */
const STATUS_KEY_BYTES = 32;

/** parseSecretRef splits `namespace/name`; throws with what is wrong. */
export function parseSecretRef(ref: string): { namespace: string; name: string } {
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/.exec(ref);
  if (!m) throw new Error(`--status-key-secret must be NAMESPACE/NAME, got "${ref}"`);
  return { namespace: m[1] as string, name: m[3] as string };
}

/** decode turns a Secret's base64 data into buffers. */
function decode(s: V1Secret): Record<string, Buffer> {
  return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
}

/** loadStatusKeys reads the key Secret, making it with a random key when it is absent. */
export async function loadStatusKeys(core: CoreV1Api, ref: string): Promise<{ keys: StatusKeys; created: boolean }> {
  const { namespace, name } = parseSecretRef(ref);
  try {
    return { keys: parseStatusKeys(decode(await core.readNamespacedSecret({ name, namespace }))), created: false };
  } catch (err) {
    if (apiErrorCode(err) !== 404) throw err;
  }
  const body: V1Secret = {
    metadata: { name, namespace, labels: { 'app.kubernetes.io/name': 'phased-rollout', 'app.kubernetes.io/component': 'status-key' } },
    type: 'Opaque',
    data: { key: randomBytes(STATUS_KEY_BYTES).toString('base64') },
  };
  try {
    return { keys: parseStatusKeys(decode(await core.createNamespacedSecret({ namespace, body }))), created: true };
  } catch (err) {
    // Another replica made it first: use its key.
    if (apiErrorCode(err) !== 409) throw err;
    return { keys: parseStatusKeys(decode(await core.readNamespacedSecret({ name, namespace }))), created: false };
  }
}
