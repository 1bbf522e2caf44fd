// The operator's allowlist of Prometheus URLs (--allowed-prometheus-urls). Whoever may edit a
// StatefulSet chooses phased-rollout.io/prometheus-url, and the controller sends a GET there (with
// credentials, when a Secret is named): without a list, that could be the API server, a cloud metadata
// address or anything else the controller's network reaches.

/**
 * decodedPath is a URL's path as a server would resolve it: percent-escapes decoded, `.` and `..`
 * segments applied. Undefined when an escape is malformed or hides a segment separator or dot segment
 * (`..%2f`, `%2e%2e`): a prefix check on such a path proves nothing about where the request lands.
 */
function decodedPath(u: URL): string | undefined {
  let raw: string;
  try {
    raw = decodeURIComponent(u.pathname);
  } catch {
    return undefined;
  }
  // The URL parser already applied literal dot segments; any left after decoding were escaped.
  if (raw !== u.pathname && (/%2f|%5c/i.test(u.pathname) || raw.split('/').some((s) => s === '.' || s === '..'))) return undefined;
  return raw.replace(/\/+$/, '');
}

/** urlAllowed tells whether `url` falls under one of `prefixes` (same scheme, host and port; decoded
 * path under the prefix's path, segment by segment). An empty list allows everything: see
 * credentialsAllowed for what an empty list never allows. */
export function urlAllowed(url: string, prefixes: readonly string[]): boolean {
  if (prefixes.length === 0) return true;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  const path = decodedPath(u);
  if (path === undefined) return false;
  return prefixes.some((p) => {
    let a: URL;
    try {
      a = new URL(p);
    } catch {
      return false;
    }
    if (a.protocol !== u.protocol || a.host !== u.host) return false;
    const base = decodedPath(a);
    return base !== undefined && (path === base || path.startsWith(`${base}/`));
  });
}

/**
 * credentialsAllowed: a Secret's token or password goes only where the operator said it may: a URL
 * under a prefix of a non-empty allow-list, or the controller's own default URL (its --prometheus-url,
 * chosen by the operator, not by whoever edits a StatefulSet). An empty list allows URLs, never
 * credentials to them: otherwise anyone who may patch a StatefulSet but not read Secrets could have a
 * labelled Secret's token sent to a server of theirs.
 */
export function credentialsAllowed(url: string, prefixes: readonly string[], operatorUrl?: string): boolean {
  return (operatorUrl !== undefined && url === operatorUrl) || listed(url, prefixes);
}

/** listed: `url` falls under a prefix of a non-empty list (the operator named it, an empty list names nothing). */
export function listed(url: string, prefixes: readonly string[]): boolean {
  return prefixes.length > 0 && urlAllowed(url, prefixes);
}

/** notAllowedMessage explains a refused URL and lists what is allowed. */
export function notAllowedMessage(prefixes: readonly string[]): string {
  return `a URL under one of the controller's --allowed-prometheus-urls: ${prefixes.join(', ')}`;
}
