// Gate policies: the spec of a RolloutGate (namespaced) or ClusterRolloutGate (cluster-scoped), shared
// by the StatefulSets that name it in phased-rollout.io/gates. The CRD's schema and CEL rules refuse a
// bad policy at the API server; the controller checks it again here with the same rules as the
// annotations (an older CRD, or one installed by hand, must not let a bad gate through).
import { compareQueryProblem, GATE_NAME, INTEGER_BOUNDS, queryProblem, type CompareTemplate } from '../annotations.js';
import { CRITERIA_HELP, parseCriteria } from '../analysis/criteria.js';
import { urlProblem, type GateTemplate, type HttpGateTemplate } from '../gate-templates.js';
import { parseJobGate, type JobGateTemplate } from '../jobs/template.js';
import { MAX_POLICY_HOOKS, parseHook, type HookTemplate } from '../hooks/template.js';
import { parseScope, type PolicyScope } from './scope.js';
import { parseCheckpoint, type CheckpointSpec } from '../checkpoints/spec.js';
import { parseAnalysisRef, type AnalysisRef } from '../argo/reference.js';

/** GROUP and VERSION of the policy resources. */
export const POLICY_GROUP = 'phased-rollout.io';
export const POLICY_VERSION = 'v1alpha1';

/** TIMING lists the settings a policy may carry, each with the annotation it stands in for. */
export const TIMING = ['initialDelaySeconds', 'periodSeconds', 'successThreshold', 'failureThreshold', 'errorLimit', 'inconclusiveLimit'] as const;
export type TimingKey = (typeof TIMING)[number];

/** GatePolicy is a checked policy: its gates (named as in the annotations) and the settings it sets. */
export interface GatePolicy {
  queries: GateTemplate[];
  http: HttpGateTemplate[];
  compare: CompareTemplate[];
  /** Job gates (only policies have them: a Job template is no annotation). */
  jobs: JobGateTemplate[];
  /** Member hooks (`hook.<name>`): Jobs or HTTP POSTs around each pod's replacement (src/hooks/template.ts). */
  hooks: HookTemplate[];
  /** A volume snapshot of each member before its pod is replaced (src/checkpoints/spec.ts). */
  checkpoint?: CheckpointSpec;
  /** Argo Rollouts' AnalysisTemplates to run at each step (spec.analysis: src/argo/reference.ts). */
  analysis?: AnalysisRef;
  /** Names (query.<name>, http.<name>, compare.<name>, job.<name>) of its dry-run gates. */
  dryRun: string[];
  timing: Partial<Record<TimingKey, number>>;
  /**
   * The namespaces a ClusterRolloutGate selects (spec.namespaceSelector) and whether it enforces there
   * (spec.enforce): a platform policy (src/policies/scope.ts). Absent for a policy that applies only
   * where a StatefulSet names it.
   */
  scope?: PolicyScope;
  /**
   * spec.tenantScoped false (a ClusterRolloutGate only: the platform's own queries): with the
   * controller's --prometheus-tenant-label, its queries go without the namespace, to
   * --platform-prometheus-url (src/policies/merge.ts). Honoured for cluster policies only.
   */
  unscoped?: true;
}

/** MAX_POLICY_GATES bounds one policy's gates (the StatefulSet's own and its policies' count together too). */
export const MAX_POLICY_GATES = 10;

type Item = { name?: unknown; query?: unknown; url?: unknown; criteria?: unknown; dryRun?: unknown; [k: string]: unknown };

/**
 * parsePolicySpec checks a policy's spec and returns it, or every problem found (each says where and
 * what is allowed).
 */
export function parsePolicySpec(spec: unknown): GatePolicy | string[] {
  const problems: string[] = [];
  const s = (spec && typeof spec === 'object' && !Array.isArray(spec) ? spec : {}) as Record<string, unknown>;
  const list = (field: string): Item[] => {
    const v = s[field];
    if (v === undefined) return [];
    if (!Array.isArray(v)) {
      problems.push(`spec.${field}: a list`);
      return [];
    }
    return v.map((x) => (x && typeof x === 'object' ? x : {}) as Item);
  };
  const out: GatePolicy = { queries: [], http: [], compare: [], jobs: [], hooks: [], dryRun: [], timing: {} };
  const seen = new Set<string>();
  const each = (field: string, kind: string, check: (item: Item, at: string) => string | undefined, add: (name: string, item: Item) => void) => {
    list(field).forEach((item, i) => {
      const at = `spec.${field}[${i}]`;
      const name = typeof item.name === 'string' ? item.name : '';
      if (!GATE_NAME.test(name)) return void problems.push(`${at}.name: a DNS label (lowercase letters, digits, "-", at most 63)`);
      const full = `${kind}.${name}`;
      if (seen.has(full)) return void problems.push(`${at}.name: ${name} is used twice`);
      seen.add(full);
      const bad = check(item, at);
      if (bad) return void problems.push(bad);
      if (item.dryRun !== undefined && typeof item.dryRun !== 'boolean') return void problems.push(`${at}.dryRun: true or false`);
      add(full, item);
      if (item.dryRun === true) out.dryRun.push(full);
    });
  };
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  each('queries', 'query', (it, at) => prefixed(`${at}.query`, queryProblem(text(it.query))), (name, it) => out.queries.push({ name, query: text(it.query) }));
  each('http', 'http', (it, at) => prefixed(`${at}.url`, urlProblem(text(it.url)) && `an http(s) URL: ${urlProblem(text(it.url))}`), (name, it) => out.http.push({ name, url: text(it.url) }));
  each(
    'compare',
    'compare',
    (it, at) => {
      const q = prefixed(`${at}.query`, compareQueryProblem(text(it.query)));
      if (q) return q;
      if (it.criteria !== undefined && typeof it.criteria !== 'string') return `${at}.criteria: ${CRITERIA_HELP}`;
      const c = parseCriteria(it.criteria as string | undefined);
      return typeof c === 'string' ? `${at}.criteria: ${CRITERIA_HELP} (${c})` : undefined;
    },
    (name, it) => out.compare.push({ name, query: text(it.query), criteria: parseCriteria(it.criteria as string | undefined) as Exclude<ReturnType<typeof parseCriteria>, string> }),
  );
  each(
    'jobs',
    'job',
    (it, at) => {
      const j = parseJobGate('', it, at);
      return typeof j === 'string' ? j : undefined;
    },
    (name, it) => out.jobs.push(parseJobGate(name, it, '') as JobGateTemplate),
  );
  list('hooks').forEach((item, i) => {
    const at = `spec.hooks[${i}]`;
    const name = typeof item.name === 'string' ? item.name : '';
    if (!GATE_NAME.test(name)) return void problems.push(`${at}.name: a DNS label (lowercase letters, digits, "-", at most 63)`);
    const h = parseHook(name, item, at);
    if (typeof h === 'string') return void problems.push(h);
    if (out.hooks.some((x) => x.name === h.name)) return void problems.push(`${at}.name: ${h.name.slice('hook.'.length)} is used twice`);
    out.hooks.push(h);
  });
  if (s.checkpoint !== undefined) {
    const cp = parseCheckpoint(s.checkpoint);
    if (Array.isArray(cp)) problems.push(...cp);
    else out.checkpoint = cp;
  }
  if (s.analysis !== undefined) {
    const a = parseAnalysisRef(s.analysis);
    if (Array.isArray(a)) problems.push(...a);
    else out.analysis = a;
  }
  if (out.hooks.length > MAX_POLICY_HOOKS) problems.push(`spec.hooks: at most ${MAX_POLICY_HOOKS} (${out.hooks.length})`);
  const count = out.queries.length + out.http.length + out.compare.length + out.jobs.length + (out.analysis ? 1 : 0);
  if (count === 0 && out.hooks.length === 0 && s.checkpoint === undefined && problems.length === 0) problems.push('spec: at least one gate in queries, http, compare, jobs or analysis, a hook in hooks, or a checkpoint');
  if (count > MAX_POLICY_GATES) problems.push(`spec: at most ${MAX_POLICY_GATES} gates in all (${count})`);
  for (const key of TIMING) {
    const v = s[key];
    if (v === undefined) continue;
    const b = INTEGER_BOUNDS[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < b.min || v > b.max) problems.push(`spec.${key}: an integer from ${b.min} to ${b.max}`);
    else out.timing[key] = v;
  }
  const scope = parseScope(s, problems);
  if (scope) out.scope = scope;
  if (s.tenantScoped !== undefined && typeof s.tenantScoped !== 'boolean') problems.push('spec.tenantScoped: true or false');
  else if (s.tenantScoped === false) out.unscoped = true;
  return problems.length > 0 ? problems : out;
}

function prefixed(at: string, problem: string | undefined | false): string | undefined {
  return problem ? `${at}: ${problem}` : undefined;
}
