// One gate check of one StatefulSet: every gate the planner asked for (Prometheus queries, comparisons,
// HTTP gates, Job gates) run at once, and each one's verdict returned; Events and metrics say what was
// measured. The reconcile (controller/reconcile.ts) asks for it when the planner says a check is due and
// hands the verdicts back to the planner (recordCheck); nothing here decides what they mean.
import type { ConfigurationOptions } from '@kubernetes/client-node';
import { CredentialsError, GATE_CREDENTIALS_LABEL, loadCredentials } from '../src/k8s/credentials.js';
import { withDeadline } from '../src/k8s/deadline.js';
import type { EventTarget } from '../src/k8s/events.js';
import { credentialsAllowed, listed } from '../src/prometheus/allowed.js';
import { httpGate } from '../src/http-gate/client.js';
import { queryGate, querySamples } from '../src/prometheus/client.js';
import { judgeComparison } from '../src/analysis/compare.js';
import { combineVerdicts, type NamedVerdict } from '../src/rollout/gates.js';
import type { CheckRequest, Memory, Verdict } from '../src/rollout/types.js';
import { runJobGates } from './jobs.js';
import { runAnalysisGates } from './argo.js';
import type { ReconcileDeps } from './deps.js';

/**
 * runChecks runs every gate of one check at once and returns each gate's verdict (dry-run gates marked);
 * the planner's recordCheck decides what they mean. Events and metrics say what was measured.
 * `waiting`: an enforced Job gate's Job is still running (or waits its turn), so there is no check to
 * count yet: neither a pass nor a reset. Job gates go first, so nothing else is asked meanwhile.
 */
export async function runChecks(d: ReconcileDeps, writeOptions: () => ConfigurationOptions, t: EventTarget, req: CheckRequest, before: Memory): Promise<NamedVerdict[] | { waiting: string[]; problem?: string }> {
  const labels = { namespace: t.namespace, statefulset: t.name };
  const dryRun = new Set(req.dryRun ?? []);
  let fromJobs: NamedVerdict[] = [];
  if (req.jobs && req.jobs.length > 0) {
    if (d.batch) {
      const jobs = await runJobGates({ batch: d.batch, events: d.events, log: d.log.child({ namespace: t.namespace, name: t.name }), read: () => withDeadline(d.requestTimeoutMs ?? 10_000), write: () => writeOptions() }, t, req.jobs, dryRun, (d.now ?? Date.now)());
      const waiting = jobs.pending.filter((n) => !dryRun.has(n));
      if (waiting.length > 0) return { waiting };
      fromJobs = jobs.results;
    } else fromJobs = req.jobs.map((j) => ({ name: j.name, verdict: { result: 'error', detail: 'this controller runs no Job gates (no batch/v1 client)' } }));
  }
  // Argo analysis runs (gate policies' spec.analysis): like a Job, a run measures until it ends.
  let fromAnalysis: NamedVerdict[] = [];
  if (req.analysis && req.analysis.length > 0) {
    const a = await runAnalysisGates(d, writeOptions, t, req, req.analysis, dryRun);
    if ('waiting' in a) return a;
    fromAnalysis = a;
  }
  let results: NamedVerdict[];
  const end = d.metrics.checkDuration.startTimer(labels);
  let errorReason = 'PrometheusError';
  try {
    const opts = withDeadline(d.requestTimeoutMs ?? 10_000);
    // The planner refuses credentials to an unlisted URL (Invalid); checked here again, so that no
    // path through this shell can send a Secret's token where the operator did not allow it.
    const allowedPrometheus = d.allowedPrometheusUrls ?? [];
    const allowedGates = d.allowedGateUrls ?? [];
    if (req.secretName && req.prometheusUrl && !credentialsAllowed(req.prometheusUrl, allowedPrometheus, d.defaultPrometheusUrl)) throw new CredentialsError(`credentials withheld: ${req.prometheusUrl} is not on --allowed-prometheus-urls`);
    const unlisted = req.httpSecretName ? req.http?.find((g) => !credentialsAllowed(g.url, allowedGates)) : undefined;
    if (unlisted) throw new CredentialsError(`credentials withheld: HTTP gate ${unlisted.name} is not on --allowed-gate-urls`);
    const [credentials, httpCredentials] = await Promise.all([
      req.secretName ? loadCredentials(d.core, t.namespace, req.secretName, opts) : undefined,
      req.httpSecretName ? loadCredentials(d.core, t.namespace, req.httpSecretName, opts, GATE_CREDENTIALS_LABEL) : undefined,
    ]);
    // Every gate at once: a check takes as long as its slowest request, not their sum.
    const target = prometheusTarget(req, credentials);
    const queries = req.gates
      .filter((g) => target(g.name))
      .map(async (g) => ({
        name: g.name,
        verdict: await (d.query ?? queryGate)({ ...target(g.name)!, query: g.query, timeoutMs: d.prometheusTimeoutMs, ...(d.maxGateAnswerBytes ? { maxBytes: d.maxGateAnswerBytes } : {}) }),
      }));
    const calls = (req.http ?? []).map(async (g) => ({
      name: g.name,
      // The start of a failing answer's body is shown only for a URL the operator listed: otherwise an
      // editor could read what any address the controller reaches answers (Events, status).
      verdict: await (d.http ?? httpGate)({ url: g.url, timeoutMs: d.httpGateTimeoutMs ?? d.prometheusTimeoutMs, showBody: listed(g.url, allowedGates), ...(httpCredentials ? { credentials: httpCredentials } : {}) }),
    }));
    // Comparisons: the same expression for the update revision and the old one, both at once.
    const comparisons = (req.compare ?? [])
      .filter((g) => target(g.name))
      .map(async (g) => {
          const sides = await Promise.all(
            [g.newQuery, g.oldQuery].map((query) => (d.samples ?? querySamples)({ ...target(g.name)!, query, timeoutMs: d.prometheusTimeoutMs, ...(d.maxGateAnswerBytes ? { maxBytes: d.maxGateAnswerBytes } : {}) })),
          );
          const [n, o] = sides;
          const failed = sides.findIndex((x) => !Array.isArray(x));
          const verdict: Verdict = failed >= 0 ? { result: 'error', detail: `${failed === 0 ? 'new' : 'old'} revision: ${(sides[failed] as Verdict).detail}` } : judgeComparison(n as number[], o as number[], g.criteria);
          return { name: g.name, verdict };
        });
    const [fromPrometheus, fromHttp, fromCompare] = await Promise.all([Promise.all(queries), Promise.all(calls), Promise.all(comparisons)]);
    results = [...fromPrometheus, ...fromCompare, ...fromHttp, ...fromJobs, ...fromAnalysis];
    // Named for what could not be evaluated: Prometheus, or only an HTTP or Job gate.
    if (![...fromPrometheus, ...fromCompare].some((r) => r.verdict.result === 'error' && !dryRun.has(r.name))) errorReason = 'GateError';
  } catch (err) {
    if (!(err instanceof CredentialsError)) throw err;
    // Every gate is unevaluated for the same reason.
    const names = [...req.gates, ...(req.compare ?? []), ...(req.http ?? [])].map((g) => g.name);
    results = [...names.map((name) => ({ name, verdict: { result: 'error' as const, detail: err.message } })), ...fromJobs, ...fromAnalysis];
  }
  end();
  for (const r of results) if (dryRun.has(r.name)) r.dryRun = true;
  const verdict = combineVerdicts(results.filter((r) => !r.dryRun && !r.partOf));
  d.metrics.checks.inc({ ...labels, result: verdict.result });
  for (const r of results) d.metrics.gateResults.inc({ ...labels, gate: r.name, result: r.verdict.result, dry_run: r.dryRun ? 'true' : 'false' });
  if (verdict.result === 'fail') await d.events.emit(t, 'Warning', 'CheckFailed', `gate failed: ${verdict.detail}`, writeOptions());
  if (verdict.result === 'error') await d.events.emit(t, 'Warning', errorReason, `gate not evaluated: ${verdict.detail}`, writeOptions());
  if (verdict.result === 'inconclusive') await d.events.emit(t, 'Normal', 'CheckInconclusive', `gate inconclusive: ${verdict.detail}`, writeOptions());
  // A dry-run gate that does not pass is told (it is being trialled), never enforced: once per change
  // of its outcome, not every period.
  for (const r of results) {
    const last = before.history?.[r.name]?.at(-1)?.result;
    if (r.dryRun && r.verdict.result !== 'pass' && r.verdict.result !== last) await d.events.emit(t, 'Normal', 'DryRunCheckFailed', `dry-run gate ${r.name} ${r.verdict.result === 'fail' ? 'failed' : r.verdict.result === 'error' ? 'not evaluated' : 'inconclusive'} (not enforced): ${r.verdict.detail}`, writeOptions());
  }
  return results;
}

/**
 * prometheusTarget says where one Prometheus gate goes: a platform policy's to the operator's
 * Prometheus with no credentials (the StatefulSet's Secret is for its own URL), every other one to the
 * StatefulSet's URL with its Secret. Undefined: no URL for it (the planner holds such a check first).
 */
export function prometheusTarget(req: CheckRequest, credentials: Awaited<ReturnType<typeof loadCredentials>> | undefined): (gate: string) => { prometheusUrl: string; credentials?: NonNullable<typeof credentials>; params?: Record<string, string> } | undefined {
  const operator = new Set(req.operatorGates ?? []);
  const unscoped = new Set(req.unscopedGates ?? []);
  // The tenant (--prometheus-tenant-label) with every query but the platform's unscoped ones, for prom-label-proxy to enforce.
  const scoped = req.tenant ? { params: { [req.tenant.label]: req.tenant.value } } : {};
  return (gate) => {
    if (unscoped.has(gate)) return req.platformPrometheusUrl ? { prometheusUrl: req.platformPrometheusUrl } : undefined;
    if (operator.has(gate)) return req.operatorPrometheusUrl ? { prometheusUrl: req.operatorPrometheusUrl, ...scoped } : undefined;
    if (!req.prometheusUrl) return undefined;
    return { prometheusUrl: req.prometheusUrl, ...scoped, ...(credentials ? { credentials } : {}) };
  };
}
