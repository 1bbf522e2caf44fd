// The I/O of Argo analysis gates (gate policies' spec.analysis): at a step's first check, read the
// templates the reference reaches and the Secrets its args name, and make the step's run
// (src/argo/prepare.ts); at each check, take the measurements the judge says are due, hand them to it
// (src/argo/run.ts) and report the run's verdict once it ends (src/argo/verdict.ts). The runs live in
// this process, one per StatefulSet and gate, for the step they judge: a new step (or pods that went
// down and came back) starts a new run, as the step's streak starts again; so does a restart of the
// controller, which never lets a step go on fewer measurements than a whole run.

import type { ConfigurationOptions } from '@kubernetes/client-node';
import { CredentialsError, GATE_CREDENTIALS_LABEL, loadCredentials } from '../src/k8s/credentials.js';
import type { Credentials } from '../src/net/bounded-get.js';
import { withDeadline } from '../src/k8s/deadline.js';
import type { EventTarget } from '../src/k8s/events.js';
import { readLabelledSecret } from '../src/k8s/secrets.js';
import { absent } from '../src/checkpoints/restore-io.js';
import { secretKey } from '../src/argo/args.js';
import { finishRun, planRun, type RunMetric } from '../src/argo/prepare.js';
import { measurePrometheus } from '../src/argo/prometheus.js';
import { measureWeb, webRequestProblem } from '../src/argo/web.js';
import { boundedGet } from '../src/net/bounded-get.js';
import { dueMetrics, inProgress, pass, startRun, terminating } from '../src/argo/run.js';
import type { ArgoTemplate, TemplateRef } from '../src/argo/template.js';
import type { ArgoMeasurement, ArgoPhase, ArgoRunSpec, ArgoRunStatus } from '../src/argo/types.js';
import { runVerdict } from '../src/argo/verdict.js';
import { queryData, type GateQuery } from '../src/prometheus/client.js';
import { credentialsAllowed, listed, urlAllowed } from '../src/prometheus/allowed.js';
import type { NamedVerdict } from '../src/rollout/gates.js';
import type { AnalysisCheck, CheckRequest, Verdict } from '../src/rollout/types.js';
import type { ReconcileDeps } from './deps.js';
import { runJobGates } from './jobs.js';
import { apiErrorCode, apiErrorMessage } from '../src/k8s/errors.js';
import { DEFAULT_JOB_TIMEOUT_SECONDS, parseJobGate, type JobCheck } from '../src/jobs/template.js';

/** Argo's API group and version, read as they are (we do not install or own these CRDs). */
export const ARGO_GROUP = 'argoproj.io';
export const ARGO_VERSION = 'v1alpha1';

interface Run {
  step: string;
  spec: Omit<ArgoRunSpec, 'metrics'> & { metrics: RunMetric[] };
  status: ArgoRunStatus;
}

/** Where one metric's query goes: the URL, and the tenant and credentials that go with it. */
export type PrometheusFor = (gate: string, address: string | undefined) => Omit<GateQuery, 'query' | 'timeoutMs'> | { error: string };

/** AnalysisOutcome: each finished run's verdict, the gates whose run still measures, and runs that cannot be made. */
export interface AnalysisOutcome {
  results: NamedVerdict[];
  running: string[];
  /** A run that cannot be made (a template missing or refused, an arg unresolved): the step holds. */
  problems: { name: string; problem: string }[];
}

/** AnalysisRuns keeps this process's runs, by StatefulSet and gate. */
export class AnalysisRuns {
  private readonly runs = new Map<string, Run>();
  private readonly told = new Map<string, string>();

  /** newProblem: whether this problem of this gate was not the last one told (its Event is sent once). */
  newProblem(t: EventTarget, gate: string, problem: string): boolean {
    const key = `${t.namespace}/${t.name}/${gate}`;
    if (this.told.get(key) === problem) return false;
    this.told.set(key, problem);
    return true;
  }

  /** forget drops a StatefulSet's runs (it was deleted, or its rollout ended). */
  forget(namespace: string, name: string): void {
    for (const map of [this.runs, this.told]) for (const k of map.keys()) if (k.startsWith(`${namespace}/${name}/`)) map.delete(k);
  }

  /** size: runs kept (a metric, and a test's check that nothing leaks). */
  get size(): number {
    return this.runs.size;
  }

  /** advance takes each gate's due measurements and returns what the runs say now. */
  async advance(d: ReconcileDeps, t: EventTarget, checks: readonly AnalysisCheck[], prometheusFor: PrometheusFor, write: () => ConfigurationOptions = () => withDeadline(d.requestTimeoutMs ?? 10_000)): Promise<AnalysisOutcome> {
    const now = d.now ?? Date.now;
    const out: AnalysisOutcome = { results: [], running: [], problems: [] };
    // Gates no longer asked (a policy renamed or removed) keep no run.
    const asked = new Set(checks.map((c) => `${t.namespace}/${t.name}/${c.name}`));
    for (const k of this.runs.keys()) if (k.startsWith(`${t.namespace}/${t.name}/`) && !asked.has(k)) this.runs.delete(k);
    await Promise.all(
      checks.map(async (c) => {
        const key = `${t.namespace}/${t.name}/${c.name}`;
        let run = this.runs.get(key);
        if (!run || run.step !== c.step) {
          const made = await makeRun(d, t, c, prometheusFor);
          if ('error' in made) {
            this.runs.delete(key);
            return void out.problems.push({ name: c.name, problem: made.error });
          }
          this.told.delete(key);
          run = { step: c.step, spec: made.spec, status: startRun() };
          this.runs.set(key, run);
        }
        const due = dueMetrics(run.spec, run.status, now());
        const metrics: RunMetric[] = run.spec.metrics;
        const status = run.status;
        const stopping = terminating(status);
        const taken = await Promise.all(
          due.map(async (name) => {
            const m = metrics.find((x) => x.name === name)!;
            if (m.provider?.job === undefined) return { name, measurement: await measure(d, c.name, m, prometheusFor, now) };
            const lm = status.metricResults.find((r) => r.name === name)?.measurements.at(-1);
            return { name, measurement: await measureJob(d, t, c, m, lm && inProgress(lm) ? lm : undefined, stopping, now, write) };
          }),
        );
        run.status = pass(run.spec, run.status, now(), taken);
        const v = runVerdict(run.status);
        if (v === 'running') out.running.push(c.name);
        else out.results.push({ name: c.name, verdict: v }, ...metricRows(c.name, run.status));
      }),
    );
    return out;
  }
}

/** makeRun reads what the reference reaches and makes the step's run, or says why it cannot. */
async function makeRun(d: ReconcileDeps, t: EventTarget, c: AnalysisCheck, prometheusFor: PrometheusFor): Promise<{ spec: Run['spec'] } | { error: string }> {
  if (!d.objects) return { error: 'this controller reads no Argo templates (no custom objects client)' };
  const read = () => withDeadline(d.requestTimeoutMs ?? 10_000);
  const found = await readTemplates(d, t, c.ref.templates);
  if ('error' in found) return found;
  const planned = planRun(c.ref, (r) => found.get(templateId(r)));
  if ('error' in planned) return planned;
  // A ClusterRolloutGate's analysis reads only ClusterAnalysisTemplates, nested ones too: a namespaced
  // template is the team's to edit, and would let it rewrite the platform's gate.
  const local = c.clusterOnly ? planned.flat.metrics.find((m) => !m.template.startsWith('ClusterAnalysisTemplate ')) : undefined;
  if (local) return { error: `${local.template}, metric ${local.name}: a ClusterRolloutGate's analysis runs only ClusterAnalysisTemplates (a namespaced template is the namespace's to edit)` };
  // template.ts refuses every other provider; this stays as the shell's own guard.
  const unrun = planned.flat.metrics.find((m) => !m.provider?.prometheus && !m.provider?.web && !m.provider?.job);
  if (unrun) return { error: `${unrun.template}, metric ${unrun.name}: provider.${Object.keys(unrun.provider ?? {})[0] ?? '?'}: only the prometheus, web and job providers are run` };
  // Secrets under the same rule as the HTTP gates': only one labelled phased-rollout.io/gate-credentials.
  const secrets = new Map<string, string>();
  for (const s of planned.secrets) {
    try {
      const data = await readLabelledSecret(d.core, t.namespace, s.name, GATE_CREDENTIALS_LABEL, (reason) => new Error(reason), read());
      if (data[s.key] !== undefined) secrets.set(secretKey(s.name, s.key), data[s.key] as string);
    } catch (err) {
      return { error: `an arg's secretKeyRef: ${(err as Error).message}` };
    }
  }
  const run = finishRun(planned, c.fields, secrets);
  if ('error' in run) return run;
  // Where each metric goes is settled before the first measurement: a destination the operator did not
  // allow holds the step (a configuration problem, never measured as Argo errors that would fail it).
  // An arg from a Secret goes only to a destination the operator listed, as credentials do (an empty
  // list allows URLs, never credentials). Messages show the template's text, never a substituted value.
  const secret = planned.secrets.length > 0;
  for (const [i, m] of run.spec.metrics.entries()) {
    const raw = planned.flat.metrics[i] ?? m;
    const at = `${m.template}, metric ${m.name}`;
    if (m.provider?.job !== undefined) {
      // A job metric's Job is made as a Job gate's (owned by the StatefulSet, labelled, held by the
      // chart's Job policy): its template is checked as a Job gate's is, before anything runs.
      const bad = jobCheckOf(c, m, { revision: '', partition: 0, pod: '', pods: '' });
      if (typeof bad === 'string') return { error: `${at}: ${bad}` };
      continue;
    }
    if (m.provider?.web !== undefined) {
      const w = m.provider.web as { url?: unknown; method?: string; body?: string; jsonBody?: unknown };
      const shown = String((raw.provider?.web as { url?: unknown } | undefined)?.url ?? '');
      const bad = typeof w.url !== 'string' ? 'no url' : webUrlProblem(w.url, d.allowedGateUrls ?? [], secret);
      if (bad) return { error: `${at}: provider.web.url ${shown}: ${bad}` };
      const request = webRequestProblem(w);
      if (request) return { error: `${at}: provider.web: ${request}` };
      continue;
    }
    const p = (m.provider?.prometheus ?? {}) as { address?: string };
    const where = prometheusFor(c.name, p.address || undefined);
    const shown = String((raw.provider?.prometheus as { address?: unknown } | undefined)?.address ?? '') || 'the StatefulSet\'s Prometheus';
    if ('error' in where) return { error: `${at}: provider.prometheus.address ${shown}: ${where.error.replace(p.address ?? '\0', shown)}` };
    if (secret && !credentialsAllowed(where.prometheusUrl, d.allowedPrometheusUrls ?? [], d.defaultPrometheusUrl)) {
      return { error: `${at}: provider.prometheus.address ${shown}: an arg from a Secret goes only to the controller's --prometheus-url or a URL under its --allowed-prometheus-urls` };
    }
  }
  return run;
}

/** webUrlProblem: why a web metric's URL may not be asked (not http(s), not under --allowed-gate-urls, or an arg from a Secret to an unlisted one). */
function webUrlProblem(url: string, allowed: readonly string[], secret: boolean): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'not a URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'not http(s)';
  if (!urlAllowed(url, allowed)) return `not under the controller's --allowed-gate-urls: ${allowed.join(', ')}`;
  if (secret && !listed(url, allowed)) return "an arg from a Secret goes only to a URL under the controller's --allowed-gate-urls (Helm value allowedGateUrls), and it lists none";
  return undefined;
}

/**
 * jobCheckOf is a job metric as a Job gate's check (src/jobs): `<gate>/<metric>`, one Job per
 * measurement (runs: check), the metric's Job template, its activeDeadlineSeconds (600 s when it sets
 * none) as the gate's timeout; or why the template is not one a Job gate could run.
 */
export function jobCheckOf(c: AnalysisCheck, m: RunMetric, step: NonNullable<AnalysisCheck['job']>): JobCheck | string {
  const job = (m.provider?.job ?? {}) as { metadata?: unknown; spec?: Record<string, unknown> };
  const deadline = job.spec?.activeDeadlineSeconds;
  const parsed = parseJobGate(`${c.name}/${m.name}`, { runs: 'check', timeoutSeconds: deadline ?? DEFAULT_JOB_TIMEOUT_SECONDS, template: { ...(job.metadata !== undefined ? { metadata: job.metadata } : {}), spec: job.spec } }, 'provider.job');
  if (typeof parsed === 'string') return parsed.replace('provider.job.template.', 'provider.job.').replace('provider.job.timeoutSeconds', 'provider.job.spec.activeDeadlineSeconds');
  return { ...parsed, name: `${c.name}/${m.name}`, ...step, analysis: true };
}

/**
 * measureJob takes or resumes one measurement of a job metric as Argo's job provider does: a Job per
 * measurement, Running while it runs (resumed after sqrt(2 x elapsed) seconds, Argo's backoff),
 * Successful when it completes, Failed when it fails; terminated (the run stops) it is deleted and the
 * measurement is Inconclusive. The Job is made as a Job gate's (controller/jobs.ts): owned by the
 * StatefulSet, labelled, its outcome counted only from a Job this process made; but each metric's Jobs
 * are decided apart (one at a time per metric), as Argo measures a run's metrics together.
 * A Job past its deadline is an Error (ours: the check could not be made), where Argo reads Failed.
 */
async function measureJob(d: ReconcileDeps, t: EventTarget, c: AnalysisCheck, m: RunMetric, current: ArgoMeasurement | undefined, stopping: boolean, now: () => number, write: () => ConfigurationOptions): Promise<ArgoMeasurement> {
  const startedAt = current?.startedAt ?? now();
  const job = current?.metadata?.job;
  const kept = job ? { metadata: { job } } : {};
  if (stopping && current) {
    if (job && d.batch) {
      try {
        await d.batch.deleteNamespacedJob({ name: job, namespace: t.namespace, propagationPolicy: 'Foreground' }, write());
      } catch (err) {
        if (apiErrorCode(err) !== 404) return { phase: 'Error', message: `Job ${job} could not be stopped: ${apiErrorMessage(err)}`, startedAt, finishedAt: now(), ...kept };
      }
    }
    return { phase: 'Inconclusive', message: 'Metric Terminated', startedAt, finishedAt: now(), ...kept };
  }
  if (!d.batch) return { phase: 'Error', message: 'this controller runs no Jobs (no batch/v1 client)', startedAt, finishedAt: now() };
  if (!c.job) return { phase: 'Error', message: 'the step a Job would judge is not known', startedAt, finishedAt: now() };
  const check = jobCheckOf(c, m, c.job);
  if (typeof check === 'string') return { phase: 'Error', message: check, startedAt, finishedAt: now() };
  const read = () => withDeadline(d.requestTimeoutMs ?? 10_000);
  const r = await runJobGates({ batch: d.batch, events: d.events, log: d.log.child({ namespace: t.namespace, name: t.name }), read, write }, t, [check], new Set(), now(), 'analysis');
  if (r.pending.includes(check.name)) {
    const name = r.running?.[check.name] ?? job;
    const at = now();
    // Argo resumes a measurement it just started at once, then backs off as the Job runs longer.
    const resumeAt = current ? at + Math.sqrt((2 * (at - startedAt)) / 1000) * 1000 : at;
    return { phase: 'Running', startedAt, resumeAt, ...(name ? { metadata: { job: name } } : {}) };
  }
  const v = r.results.find((x) => x.name === check.name)?.verdict ?? { result: 'error' as const, detail: 'the Job gave no outcome' };
  const phase = v.result === 'pass' ? 'Successful' : v.result === 'fail' ? 'Failed' : 'Error';
  return { phase, ...(v.value ? { value: v.value } : {}), message: v.detail, startedAt, finishedAt: now(), ...kept };
}

/** measure takes one measurement of a prometheus or web metric (job metrics: measureJob; template.ts refuses the others). */
async function measure(d: ReconcileDeps, gate: string, m: RunMetric, prometheusFor: PrometheusFor, now: () => number): Promise<ArgoMeasurement> {
  const startedAt = now();
  if (m.provider?.web) return measureWebMetric(d, m, now);
  const p = (m.provider?.prometheus ?? undefined) as { address?: string; query?: string; timeout?: number } | undefined;
  if (!p) return { phase: 'Error', message: `${m.template}, metric ${m.name}: only the prometheus provider is run`, startedAt, finishedAt: now() };
  const where = prometheusFor(gate, p.address || undefined);
  if ('error' in where) return { phase: 'Error', message: where.error, startedAt, finishedAt: now() };
  // Argo's provider timeout is in seconds; ours bounds it.
  const timeoutMs = Math.min(d.prometheusTimeoutMs, typeof p.timeout === 'number' && p.timeout > 0 ? p.timeout * 1000 : d.prometheusTimeoutMs);
  const answer = await (d.queryData ?? queryData)({ ...where, query: p.query ?? '', timeoutMs, ...(d.maxGateAnswerBytes ? { maxBytes: d.maxGateAnswerBytes } : {}) });
  return measurePrometheus(m, answer, startedAt, now());
}

/**
 * prometheusFor says where an analysis gate's metric goes: a platform policy's to the operator's
 * Prometheus whatever the template's address (as its queries do); otherwise the template's address if
 * the operator allows it (--allowed-prometheus-urls), or the StatefulSet's Prometheus when it names
 * none. The tenant goes with each; the StatefulSet's Secret only to its own listed URL.
 */
export function analysisPrometheus(opts: { operatorGates: readonly string[]; operatorUrl?: string; ownUrl?: string; allowed: readonly string[]; defaultUrl?: string; tenant?: { label: string; value: string }; credentials?: GateQuery['credentials'] }): PrometheusFor {
  const params = opts.tenant ? { params: { [opts.tenant.label]: opts.tenant.value } } : {};
  return (gate, address) => {
    if (opts.operatorGates.includes(gate)) return opts.operatorUrl ? { prometheusUrl: opts.operatorUrl, ...params } : { error: "a platform policy's analysis goes to the controller's --prometheus-url, and it has none" };
    const url = address ?? opts.ownUrl ?? opts.defaultUrl;
    if (!url) return { error: 'the metric names no address, and there is no phased-rollout.io/prometheus-url or --prometheus-url' };
    if (!urlAllowed(url, opts.allowed)) return { error: `address ${url} is not under the controller's --allowed-prometheus-urls: ${opts.allowed.join(', ')}` };
    const mine = opts.credentials && url === opts.ownUrl && credentialsAllowed(url, opts.allowed, opts.defaultUrl);
    return { prometheusUrl: url, ...params, ...(mine ? { credentials: opts.credentials } : {}) };
  };
}

const templateId = (r: TemplateRef) => `${r.clusterScope ? 'cluster/' : ''}${r.templateName}`;

/** readTemplates reads every template the references reach (bounded as collect bounds the depth); a missing one is left for collect to name. */
async function readTemplates(d: ReconcileDeps, t: EventTarget, refs: readonly TemplateRef[]): Promise<Map<string, ArgoTemplate> | { error: string }> {
  const objects = d.objects!;
  const read = () => withDeadline(d.requestTimeoutMs ?? 10_000);
  const found = new Map<string, ArgoTemplate>();
  let frontier = [...refs];
  try {
    for (let depth = 0; depth <= 10 && frontier.length > 0; depth++) {
      const next: TemplateRef[] = [];
      for (const r of frontier) {
        if (found.has(templateId(r))) continue;
        const o = (await absent(
          r.clusterScope
            ? objects.getClusterCustomObject({ group: ARGO_GROUP, version: ARGO_VERSION, plural: 'clusteranalysistemplates', name: r.templateName }, read())
            : objects.getNamespacedCustomObject({ group: ARGO_GROUP, version: ARGO_VERSION, namespace: t.namespace, plural: 'analysistemplates', name: r.templateName }, read()),
        )) as { spec?: ArgoTemplate['spec'] } | undefined;
        if (!o) continue;
        const tpl: ArgoTemplate = { cluster: r.clusterScope === true, name: r.templateName, spec: o.spec ?? {} };
        found.set(templateId(r), tpl);
        next.push(...(tpl.spec.templates ?? []));
      }
      frontier = next;
    }
  } catch (err) {
    // Forbidden (the chart's rights not installed), a timeout: held with the reason, tried again at the next check.
    return { error: `the templates could not be read: ${(err as Error).message}` };
  }
  return found;
}

/** The most of a web metric's answer read: Argo reads it whole; a gate's answer this large is no health answer. */
const WEB_MAX_BODY = 1 << 20;

/**
 * measureWebMetric asks a web metric's URL as Argo's web provider does (method, headers, body or
 * jsonBody with its content type, timeoutSeconds defaulting to 10) and judges the answer
 * (src/argo/web.ts). Redirects are not followed, as for HTTP gates: a 3xx answer is an Error.
 */
async function measureWebMetric(d: ReconcileDeps, m: RunMetric, now: () => number): Promise<ArgoMeasurement> {
  const startedAt = now();
  const w = m.provider!.web as { url: string; method?: string; headers?: { key: string; value: string }[]; body?: string; jsonBody?: unknown; timeoutSeconds?: number };
  const problem = webRequestProblem(w);
  if (problem) return { phase: 'Error', message: problem, startedAt, finishedAt: now() };
  const headers: Record<string, string> = {};
  for (const h of w.headers ?? []) headers[h.key] = h.value;
  if (w.jsonBody !== undefined) headers['content-type'] = 'application/json';
  const body = w.jsonBody !== undefined ? JSON.stringify(w.jsonBody) : w.body || undefined;
  const timeoutMs = (typeof w.timeoutSeconds === 'number' && w.timeoutSeconds > 0 ? w.timeoutSeconds : 10) * 1000;
  const answer = await (d.webRequest ?? boundedGet)(new URL(w.url), { timeoutMs, maxBody: WEB_MAX_BODY, overflow: 'error', request: { method: w.method || 'GET', headers, ...(body !== undefined ? { body } : {}) } });
  const measured = measureWeb(m, answer, startedAt, now());
  // What an address answers is shown (status, history, Events) only for a URL the operator listed, as
  // for HTTP gates: otherwise a policy's author could read any address the controller reaches.
  if (!listed(w.url, d.allowedGateUrls ?? [])) delete measured.value;
  return measured;
}

/** At most this many metrics of one run get a row of their own in the history (the run's verdict always has one). */
const MAX_METRIC_ROWS = 8;
const RESULT_OF: Record<ArgoPhase, Verdict['result']> = { Successful: 'pass', Failed: 'fail', Error: 'error', Inconclusive: 'inconclusive', Running: 'inconclusive', Pending: 'inconclusive' };

/**
 * metricRows: each metric of a finished run as a row of the history (`<gate>/<metric>`: its phase, its
 * counts and last value), for `kubectl phased-rollout status` and the dashboard; never a verdict of its own.
 */
export function metricRows(gate: string, status: ArgoRunStatus): NamedVerdict[] {
  return status.metricResults.slice(0, MAX_METRIC_ROWS).map((r) => {
    const last = r.measurements[r.measurements.length - 1];
    const detail = `${r.phase}${r.message ? `: ${r.message}` : ''} (✔${r.successful} ✖${r.failed} ?${r.inconclusive} ⚠${r.error} of ${r.count})`;
    const value = last?.value ?? last?.phase;
    return { name: `${gate}/${r.name}`, partOf: gate, ...(r.dryRun ? { dryRun: true } : {}), verdict: { result: RESULT_OF[r.phase], detail, ...(value !== undefined ? { value } : {}) } };
  });
}

/**
 * runAnalysisGates is the analysis part of one check (controller/checks.ts): each gate's run advanced,
 * and its verdicts once every enforced run has ended; `waiting` while one measures or cannot be made (a
 * template missing or refused is no failure of the release: the step holds as Invalid with `problem`,
 * and an AnalysisInvalid Event names it once). A dry-run analysis never holds a step, as a dry-run Job gate.
 */
export async function runAnalysisGates(d: ReconcileDeps, writeOptions: () => ConfigurationOptions, t: EventTarget, req: CheckRequest, checks: readonly AnalysisCheck[], dryRun: ReadonlySet<string>): Promise<NamedVerdict[] | { waiting: string[]; problem?: string }> {
  if (!d.analysisRuns) return checks.map((a) => ({ name: a.name, verdict: { result: 'error', detail: 'this controller runs no analysis' } }));
  // The StatefulSet's Secret (phased-rollout.io/prometheus-secret) goes with a metric sent to its own
  // URL, under the same rules as its queries; one that cannot be read holds the step.
  let credentials: Credentials | undefined;
  if (req.secretName && req.prometheusUrl) {
    try {
      credentials = await loadCredentials(d.core, t.namespace, req.secretName, withDeadline(d.requestTimeoutMs ?? 10_000));
    } catch (err) {
      if (!(err instanceof CredentialsError)) throw err;
      return { waiting: checks.map((a) => a.name), problem: `the analysis cannot query Prometheus: ${err.message}` };
    }
  }
  const where = analysisPrometheus({
    operatorGates: req.operatorGates ?? [],
    allowed: d.allowedPrometheusUrls ?? [],
    ...(req.operatorPrometheusUrl ? { operatorUrl: req.operatorPrometheusUrl } : {}),
    ...(req.prometheusUrl ? { ownUrl: req.prometheusUrl } : {}),
    ...(d.defaultPrometheusUrl ? { defaultUrl: d.defaultPrometheusUrl } : {}),
    ...(req.tenant ? { tenant: req.tenant } : {}),
    ...(credentials ? { credentials } : {}),
  });
  const a = await d.analysisRuns.advance(d, t, checks, where, writeOptions);
  for (const p of a.problems) if (d.analysisRuns.newProblem(t, p.name, p.problem)) await d.events.emit(t, 'Warning', 'AnalysisInvalid', `analysis ${p.name} cannot run; the step holds: ${p.problem}`, writeOptions());
  const enforced = a.problems.filter((p) => !dryRun.has(p.name));
  const held = [...enforced.map((p) => p.name), ...a.running.filter((n) => !dryRun.has(n))];
  const problem = enforced.map((p) => `analysis ${p.name} cannot run: ${p.problem}`).join('; ');
  return held.length > 0 ? { waiting: held, ...(problem ? { problem } : {}) } : a.results;
}
