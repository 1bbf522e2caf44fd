// Gate templates as written in the annotations: PromQL queries and HTTP gate URLs with placeholders
// that name the pod being judged. Validation (at admission and in the controller) and rendering live
// here, below both the annotation parser and the rollout planner: values are escaped for a PromQL
// string literal or percent-encoded for a URL, so no object name can inject PromQL or move a request.

/** GateTemplate is one gate as written in the annotations: its key suffix and its PromQL. */
export interface GateTemplate {
  /** `query` for phased-rollout.io/query, `query.<name>` for phased-rollout.io/query.<name>. */
  name: string;
  query: string;
}

/** PLACEHOLDERS are the names a query may use as `{{name}}`. */
export const PLACEHOLDERS = ['namespace', 'statefulset', 'pod', 'ordinal', 'revision'] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];

/** PodContext is what the placeholders stand for at one check. */
export type PodContext = Record<Placeholder, string>;

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** A string literal of the query: [start, end) including its quotes, and the quote it uses. */
interface Literal {
  start: number;
  end: number;
  quote: string;
}

/**
 * literalsOf finds the string literals of a PromQL text ("...", '...' with backslash escapes, `...`
 * raw). An unterminated literal runs to the end. Enough to tell where a placeholder stands; the
 * query's own syntax is Prometheus's to judge.
 */
function literalsOf(q: string): Literal[] {
  const out: Literal[] = [];
  for (let i = 0; i < q.length; i++) {
    const ch = q[i] ?? '';
    if (ch === '#') {
      // A comment runs to the end of the line; quotes inside it open nothing.
      while (i < q.length && q[i] !== '\n') i++;
      continue;
    }
    if (ch !== '"' && ch !== "'" && ch !== '`') continue;
    const start = i;
    for (i++; i < q.length && q[i] !== ch; i++) if (ch !== '`' && q[i] === '\\') i++;
    out.push({ start, end: Math.min(i + 1, q.length), quote: ch });
  }
  return out;
}

/**
 * placeholderProblem says what is wrong with the placeholders of a query, or undefined. A placeholder
 * must be one of PLACEHOLDERS and stand inside a "..." or '...' literal: outside one, a value would be
 * PromQL syntax rather than data; a raw `...` literal cannot escape anything.
 */
export function placeholderProblem(query: string): string | undefined {
  const literals = literalsOf(query);
  for (const m of query.matchAll(PLACEHOLDER)) {
    const name = m[1] ?? '';
    if (!(PLACEHOLDERS as readonly string[]).includes(name)) return `unknown placeholder {{${name}}}; known: ${PLACEHOLDERS.map((p) => `{{${p}}}`).join(' ')}`;
    const at = m.index ?? 0;
    const lit = literals.find((l) => at > l.start && at < l.end);
    if (!lit || lit.quote === '`') return `placeholder {{${name}}} must stand inside a "..." label value, e.g. pod="{{pod}}"`;
  }
  return undefined;
}

/** usesPlaceholders is true when a query names the pod or the revision being judged. */
export function usesPlaceholders(query: string): boolean {
  return new RegExp(PLACEHOLDER.source).test(query);
}

/** escapeLiteral escapes a value for a PromQL string literal quoted with `quote`. */
export function escapeLiteral(value: string, quote: string): string {
  return value.replace(/[\\\n\r]|["']/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === quote ? `\\${c}` : c));
}

/** renderQuery fills the placeholders of a (validated) query in, each escaped for its literal. */
export function renderQuery(query: string, ctx: PodContext): string {
  const literals = literalsOf(query);
  return query.replace(PLACEHOLDER, (whole, name: string, at: number) => {
    const lit = literals.find((l) => at > l.start && at < l.end);
    if (!lit || !(PLACEHOLDERS as readonly string[]).includes(name)) return whole; // refused at admission
    return escapeLiteral(ctx[name as Placeholder], lit.quote);
  });
}

/** HttpGateTemplate is one HTTP gate as written: `http.<name>` and its URL (placeholders unfilled). */
export interface HttpGateTemplate {
  name: string;
  url: string;
}

/** MAX_URL_LENGTH bounds an HTTP gate's URL. */
export const MAX_URL_LENGTH = 2048;

/** SAMPLE fills every placeholder with a plain value, to check what a URL looks like once rendered. */
const SAMPLE: PodContext = { namespace: 'ns', statefulset: 'sts', pod: 'sts-0', ordinal: '0', revision: 'rev' };
/** OTHER differs from SAMPLE in every placeholder: what changes between the two renderings, a placeholder decides. */
const OTHER: PodContext = { namespace: 'other-ns', statefulset: 'other', pod: 'other-9', ordinal: '9', revision: 'other-rev' };

/**
 * urlProblem says what is wrong with an HTTP gate URL, or undefined. It must be http(s), without
 * credentials (they belong in the http-secret) or fragment, and placeholders may stand only after the
 * host (in the path or query): a placeholder can never choose where the request goes.
 */
export function urlProblem(url: string): string | undefined {
  if (url.length > MAX_URL_LENGTH) return `at most ${MAX_URL_LENGTH} characters`;
  for (const m of url.matchAll(PLACEHOLDER)) {
    const name = m[1] ?? '';
    if (!(PLACEHOLDERS as readonly string[]).includes(name)) return `unknown placeholder {{${name}}}; known: ${PLACEHOLDERS.map((p) => `{{${p}}}`).join(' ')}`;
  }
  let u: URL;
  let other: URL;
  try {
    u = new URL(renderUrl(url, SAMPLE));
    other = new URL(renderUrl(url, OTHER));
  } catch {
    return 'a URL such as http://consul.local:8500/v1/agent/health/service/name/{{statefulset}}';
  }
  // Judged as the URL parser reads it, not by where `://` is: `http:/{{pod}}.x/` has its host after a
  // single slash. Rendered with two different values, the scheme, host and port must not change.
  if (u.origin !== other.origin || u.username !== other.username || u.password !== other.password) return 'placeholders may stand only in the path or query, after the host';
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'an http:// or https:// URL';
  if (u.username !== '' || u.password !== '') return 'no credentials in the URL: name a Secret in phased-rollout.io/http-secret';
  if (u.hash !== '') return 'no #fragment';
  return undefined;
}

/** renderUrl fills the placeholders of a (validated) URL in, each percent-encoded as one URL component. */
export function renderUrl(url: string, ctx: PodContext): string {
  return url.replace(PLACEHOLDER, (whole, name: string) => ((PLACEHOLDERS as readonly string[]).includes(name) ? encodeURIComponent(ctx[name as Placeholder]) : whole));
}
