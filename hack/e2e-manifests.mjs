// Reads the shipped manifests (kubectl's JSON List of `kustomize manifests/base`) and prints the objects
// the end-to-end harness applies: the gate policy CRDs, namespace, service accounts, RBAC, the backstop policy, and the
// MutatingWebhookConfiguration with clientConfig switched from the in-cluster Service to a loopback URL.
// Everything else of the registration (rules, matchConditions, namespaceSelector, timeoutSeconds,
// failurePolicy) stays exactly as shipped. Usage: node e2e-manifests.mjs LIST.json URL CA_BUNDLE_BASE64
import { readFileSync } from 'node:fs';

const [file, url, caBundle] = process.argv.slice(2);
if (!file || !url || !caBundle) {
  console.error('usage: e2e-manifests.mjs LIST.json URL CA_BUNDLE');
  process.exit(2);
}
// kubectl prints one pretty-printed object after another, each starting with `{` in the first column.
const objects = readFileSync(file, 'utf8')
  .split(/\n(?=\{)/)
  .filter((t) => t.trim() !== '')
  .map((t) => JSON.parse(t));
const keep = new Set([
  'CustomResourceDefinition',
  'Namespace',
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'MutatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);
const items = objects.flatMap((o) => (o.kind === 'List' ? o.items : [o])).filter((o) => keep.has(o.kind));
for (const o of items) {
  if (o.kind !== 'MutatingWebhookConfiguration') continue;
  for (const w of o.webhooks) w.clientConfig = { url, caBundle };
}
if (!items.some((o) => o.kind === 'MutatingWebhookConfiguration')) {
  console.error('no MutatingWebhookConfiguration in the manifests');
  process.exit(1);
}
process.stdout.write(JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, 1) + '\n');
