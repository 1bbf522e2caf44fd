// The verb and resource of a Kubernetes API request, read from its method and URL, for the
// phased_rollout_kube_api_requests_total metric. Pure, so the label set stays small and known.

/** requestLabels turns `GET /apis/apps/v1/namespaces/ns/statefulsets?...` into { verb: list, resource: statefulsets }. */
export function requestLabels(method: string, url: string): { verb: string; resource: string } {
  let path: string;
  try {
    path = new URL(url, 'http://x').pathname;
  } catch {
    return { verb: method.toLowerCase(), resource: 'unknown' };
  }
  // /api/v1/... or /apis/<group>/<version>/...; then optional namespaces/<ns>/, then resource[/name[/sub]].
  const parts = path.split('/').filter(Boolean);
  if (parts[0] !== 'api' && parts[0] !== 'apis') return { verb: method.toLowerCase(), resource: 'unknown' };
  let rest = parts[0] === 'api' ? parts.slice(2) : parts[0] === 'apis' ? parts.slice(3) : [];
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const [resource = 'unknown', name, sub] = rest;
  const m = method.toUpperCase();
  const verb = m === 'GET' ? (name === undefined ? 'list' : 'get') : m === 'POST' ? 'create' : m === 'PATCH' ? 'patch' : m === 'PUT' ? 'update' : m === 'DELETE' ? 'delete' : m.toLowerCase();
  const watch = m === 'GET' && /[?&]watch=(true|1)/.test(url);
  return { verb: watch ? 'watch' : verb, resource: sub ? `${resource}/${sub}` : resource };
}
