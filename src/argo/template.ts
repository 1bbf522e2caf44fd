// Reading Argo Rollouts' AnalysisTemplates and ClusterAnalysisTemplates as they are: following
// `spec.templates` composition, flattening and merging args as Argo builds an AnalysisRun
// (utils/analysis: FlattenTemplates, MergeArgs; rollout/analysis.go: the nested references), and
// refusing, with a message that names the template, the metric and the field, whatever we do not run
// ourselves. Pure: the shell looks the objects up and reads Secrets; src/argo/args.ts resolves values.

import type { ArgoMetric } from './types.js';

export interface ArgoArg {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string }; podTemplateHashValue?: string };
}

export interface TemplateRef {
  templateName: string;
  clusterScope?: boolean;
}

/** What a template's spec holds, in Argo's field names. */
export interface ArgoTemplateSpec {
  metrics?: ArgoMetric[];
  args?: ArgoArg[];
  dryRun?: { metricName: string }[];
  measurementRetention?: { metricName: string; limit: number }[];
  templates?: TemplateRef[];
}

export interface ArgoTemplate {
  cluster: boolean;
  name: string;
  spec: ArgoTemplateSpec;
}

/** The flattened run: metrics (each with the template it came from), the merged args, dry-run and retention rules. */
export interface FlatRun {
  metrics: (ArgoMetric & { template: string })[];
  args: ArgoArg[];
  dryRun: { metricName: string }[];
  measurementRetention: { metricName: string; limit: number }[];
}

/** How a template is named in messages: `AnalysisTemplate x` or `ClusterAnalysisTemplate x`. */
export function templateLabel(t: { cluster: boolean; name: string }): string {
  return `${t.cluster ? 'ClusterAnalysisTemplate' : 'AnalysisTemplate'} ${t.name}`;
}

// Argo follows nested references without bound (a cycle never ends); we stop at this depth and refuse.
const MAX_DEPTH = 10;

/**
 * collect finds every template the references reach, in Argo's order (each template, then what it
 * references, depth first), each once: the namespaced ones, then the cluster ones, as Argo keeps them
 * in two lists. A missing template or a cycle is an error naming it.
 */
export function collect(refs: TemplateRef[], lookup: (ref: TemplateRef) => ArgoTemplate | undefined): { templates: ArgoTemplate[]; clusterTemplates: ArgoTemplate[] } | { error: string } {
  const templates: ArgoTemplate[] = [];
  const clusterTemplates: ArgoTemplate[] = [];
  const walk = (list: TemplateRef[], path: string[]): string | undefined => {
    for (const ref of list) {
      const label = templateLabel({ cluster: ref.clusterScope === true, name: ref.templateName });
      if (path.includes(label)) return `${[...path, label].join(' -> ')}: templates reference each other in a cycle`;
      if (path.length >= MAX_DEPTH) return `${[...path, label].join(' -> ')}: templates nest deeper than ${MAX_DEPTH}`;
      const t = lookup(ref);
      if (!t) return `${label} not found`;
      (t.cluster ? clusterTemplates : templates).push(t);
      const inner = walk(t.spec.templates ?? [], [...path, label]);
      if (inner) return inner;
    }
    return undefined;
  };
  const error = walk(refs, []);
  if (error) return { error };
  // FilterUniqueTemplates: the first of each name stays.
  const unique = (list: ArgoTemplate[]): ArgoTemplate[] => list.filter((t, i) => list.findIndex((x) => x.name === t.name) === i);
  return { templates: unique(templates), clusterTemplates: unique(clusterTemplates) };
}

/** flatten is FlattenTemplates: every metric once by name, args merged where they agree. */
export function flatten(templates: ArgoTemplate[], clusterTemplates: ArgoTemplate[]): FlatRun | { error: string } {
  const all = [...templates, ...clusterTemplates];
  const metrics = all.flatMap((t) => (t.spec.metrics ?? []).map((m) => ({ ...m, template: templateLabel(t) })));
  const seen = new Set<string>();
  for (const m of metrics) {
    if (seen.has(m.name)) return { error: `two metrics have the same name '${m.name}'` };
    seen.add(m.name);
  }
  // Argo's order of checks: metrics, dry-run rules, retention rules, then args.
  const dryRun = all.flatMap((t) => t.spec.dryRun ?? []);
  const measurementRetention = all.flatMap((t) => t.spec.measurementRetention ?? []);
  const ruleError = checkRules(dryRun, 'dryRun') ?? checkRules(measurementRetention, 'measurementRetention');
  if (ruleError) return { error: ruleError };
  const args: ArgoArg[] = [];
  for (const a of all.flatMap((t) => t.spec.args ?? [])) {
    const i = args.findIndex((p) => p.name === a.name);
    if (i < 0) {
      args.push(a);
      continue;
    }
    const prev = args[i] as ArgoArg;
    if (prev.value !== undefined && a.value !== undefined && prev.value !== a.value) return { error: `Argument \`${a.name}\` specified multiple times with different values: '${prev.value}', '${a.value}'` };
    if (prev.value === undefined) args[i] = a;
  }
  return { metrics, args, dryRun, measurementRetention };
}

// validateDryRunMetrics / validateMeasurementRetentionMetrics: no two rules for one name.
function checkRules(rules: { metricName: string }[], field: 'dryRun' | 'measurementRetention'): string | undefined {
  const seen = new Set<string>();
  for (const r of rules) {
    if (seen.has(r.metricName)) return `two ${field === 'dryRun' ? 'Dry-Run' : 'Measurement Retention'} metric rules have the same name '${r.metricName}'`;
    seen.add(r.metricName);
  }
  return undefined;
}

/**
 * mergeArgs is MergeArgs: the reference's values (or valueFrom) replace the template's for args the
 * template declares (others are ignored, as Argo ignores them); every arg must then have one or the other.
 */
export function mergeArgs(incoming: ArgoArg[], templateArgs: ArgoArg[]): ArgoArg[] | { error: string } {
  const out = templateArgs.map((a) => ({ ...a }));
  for (const a of incoming) {
    const t = out.find((x) => x.name === a.name);
    if (!t) continue;
    if (a.value !== undefined) t.value = a.value;
    else if (a.valueFrom !== undefined) t.valueFrom = a.valueFrom;
  }
  const missing = out.find((a) => a.value === undefined && a.valueFrom === undefined);
  return missing ? { error: `args.${missing.name} was not resolved` } : out;
}

/**
 * resolveMetricArgs is ResolveMetricArgs: `{{args.name}}` (spaces inside the braces allowed) replaced
 * in every string of the metric, each value escaped as a JSON string's contents (Argo substitutes into
 * the metric's JSON); any other `{{...}}` is an error, as in Argo.
 */
export function resolveMetricArgs<M extends ArgoMetric>(metric: M, values: Map<string, string>): M | { error: string } {
  let error: string | undefined;
  const text = JSON.stringify(metric).replace(/\{\{(.*?)\}\}/g, (_all, tag: string) => {
    const key = tag.trim();
    const v = key.startsWith('args.') ? values.get(key.slice(5)) : undefined;
    if (v === undefined) {
      error = `failed to resolve {{${tag}}}`;
      return '';
    }
    // Argo escapes with Go's strconv.Quote, then reads the metric back as JSON: the escapes Go writes
    // that JSON has not (\a, \v, \xNN for other control bytes and DEL) make Argo's run an Error.
    const bad = /[\x00-\x07\x0b\x0e-\x1f\x7f]/.exec(v);
    if (bad) {
      const c = bad[0].charCodeAt(0);
      error ??= `invalid character '${c === 7 ? 'a' : c === 11 ? 'v' : 'x'}' in string escape code`;
      return '';
    }
    return JSON.stringify(v).slice(1, -1);
  });
  if (error) return { error };
  try {
    return JSON.parse(text) as M;
  } catch (e) {
    return { error: `the metric is not valid after its args were substituted: ${(e as Error).message}` };
  }
}

/** Providers run here, and their fields that we refuse (each with why). */
const PROVIDERS = ['prometheus', 'web', 'job'];
const REFUSED_FIELDS: Record<string, Record<string, string>> = {
  prometheus: {
    rangeQuery: 'range queries are not run here: write an instant query over a range vector (`...[5m]`)',
    authentication: 'provider authentication (sigv4, oauth2) is not run here: credentials come from a Secret with phased-rollout.io/prometheus-secret',
    headers: 'headers would carry credentials in the template: credentials come from a Secret with phased-rollout.io/prometheus-secret',
    insecure: 'TLS verification cannot be turned off here',
  },
  web: {
    authentication: 'provider authentication (oauth2) is not run here: credentials come from a Secret (phased-rollout.io/http-secret)',
    insecure: 'TLS verification cannot be turned off here',
  },
};

/** refusal says why a metric cannot run here, naming the template, the metric and the field; undefined when it can. */
export function refusal(m: ArgoMetric & { template?: string }): string | undefined {
  const where = `${m.template ?? 'the template'}, metric ${m.name}`;
  const provider = m.provider ?? {};
  // Named in alphabetical order, as the admission policy names them (CEL cannot list an object's keys).
  const kinds = Object.keys(provider).filter((k) => provider[k] !== undefined && provider[k] !== null).sort();
  if (kinds.length !== 1) return `${where}: provider: exactly one provider is needed, found ${kinds.length === 0 ? 'none' : kinds.join(', ')}`;
  const kind = kinds[0] as string;
  if (!PROVIDERS.includes(kind)) return `${where}: provider.${kind}: the ${kind} provider is not run here (prometheus, web and job are)`;
  const fields = (provider[kind] ?? {}) as Record<string, unknown>;
  for (const [field, why] of Object.entries(REFUSED_FIELDS[kind] ?? {})) {
    const v = fields[field];
    // Present is refused, as the admission policy (charts/.../analysis-policy.yaml) refuses it: CEL can
    // tell an empty list but not an empty object, so `authentication: {}` is refused in both places.
    if (v === undefined || v === null || v === false || (Array.isArray(v) && v.length === 0)) continue;
    return `${where}: provider.${kind}.${field}: ${why}`;
  }
  if (kind === 'web' && Array.isArray(fields.headers)) {
    // A header's value written in the template is visible to anyone who reads templates; one that
    // comes from args is resolved from a Secret (valueFrom.secretKeyRef) and stays out of the object.
    const named = (fields.headers as { key?: string; value?: string }[]).find((h) => /^(authorization|proxy-authorization|cookie|x-api-key)$/i.test(h.key ?? '') && !/\{\{\s*args\./.test(h.value ?? ''));
    if (named) return `${where}: provider.web.headers: the header ${named.key} carries a credential written in the template: take it from a Secret through an arg (valueFrom.secretKeyRef)`;
    // Headers that would change where the request goes or how it is framed: the URL alone is checked
    // against --allowed-gate-urls, and a Host header would reach another site behind the same address.
    const framing = (fields.headers as { key?: string }[]).find((h) => /^(host|content-length|transfer-encoding|connection|upgrade|te|trailer|keep-alive|proxy-connection|expect)$/i.test(h.key ?? ''));
    if (framing) return `${where}: provider.web.headers: the header ${framing.key} is not sent from a template (the URL decides where the request goes)`;
  }
  return undefined;
}
