// The operator's allowlist of Prometheus URLs (--allowed-prometheus-urls). Whoever may edit a
// StatefulSet chooses phased-rollout.io/prometheus-url, and the controller sends a GET there (with
// credentials, when a Secret is named): without a list, that could be the API server, a cloud metadata
// address or anything else the controller's network reaches.

/** urlAllowed tells whether `url` falls under one of `prefixes` (same scheme, host and port; path
 * under the prefix's path, segment by segment). An empty list allows everything. */
export function urlAllowed(url: string, prefixes: readonly string[]): boolean {
  if (prefixes.length === 0) return true;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return prefixes.some((p) => {
    let a: URL;
    try {
      a = new URL(p);
    } catch {
      return false;
    }
    if (a.protocol !== u.protocol || a.host !== u.host) return false;
    const base = a.pathname.replace(/\/+$/, '');
    const path = u.pathname.replace(/\/+$/, '');
    return path === base || path.startsWith(`${base}/`);
  });
}

/** notAllowedMessage explains a refused URL and lists what is allowed. */
export function notAllowedMessage(prefixes: readonly string[]): string {
  return `a URL under one of the controller's --allowed-prometheus-urls: ${prefixes.join(', ')}`;
}
