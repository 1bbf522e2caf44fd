// The judge of an Argo analysis run: which metrics measure now, what a measurement does to the
// counters, and what a metric and the run then are, rule for rule as Argo Rollouts v1.10's analysis
// controller decides them (analysis/analysis.go: generateMetricTasks, runMeasurements,
// assessMetricStatus, assessMetricFailureInconclusiveOrError, assessRunStatus,
// calculateNextReconcileTime, garbageCollectMeasurements; utils/analysis: ValidateMetric).
// Argo's objects are judged by Argo's rules even where our annotations' differ (failureLimit counts
// failures in total, not in a row; errors count only in a row): a team brings its templates and gets
// the verdicts it knows. The golden test (test/argo-golden.test.ts) holds these functions to Argo's
// own code. Pure: the shell takes the measurements the judge asks for and hands them back.

import { parseGoDuration } from './duration.js';
import { completed, type ArgoMeasurement, type ArgoMetric, type ArgoMetricResult, type ArgoPhase, type ArgoRunSpec, type ArgoRunStatus, type IntOrString } from './types.js';

/** Argo's defaults: errors in a row before a metric errs, the retry after an error, measurements kept. */
export const DEFAULT_CONSECUTIVE_ERROR_LIMIT = 4;
export const ERROR_RETRY_MS = 10_000;
export const MEASUREMENT_HISTORY_LIMIT = 10;

// Best to worst, as Argo orders completed phases when it takes the worst metric.
const ORDER: ArgoPhase[] = ['Successful', 'Running', 'Pending', 'Inconclusive', 'Error', 'Failed'];

const MAX_INT64 = 2n ** 63n - 1n;
const MIN_INT64 = -(2n ** 63n);

// IntOrString.IntValue(): Go's Atoi of a string (only an optional sign and digits; a value out of
// range saturates), and 0 for what it cannot read.
function int64Of(v: IntOrString | undefined): bigint | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'number') return BigInt(Math.trunc(v));
  if (!/^[+-]?\d+$/.test(v)) return 0n;
  const n = BigInt(v);
  return n > MAX_INT64 ? MAX_INT64 : n < MIN_INT64 ? MIN_INT64 : n;
}

/** intValue is IntOrString.IntValue(), as Argo's validation reads it (a Go int). */
export function intValue(v: IntOrString | undefined): number | undefined {
  const n = int64Of(v);
  return n === undefined ? undefined : Number(n);
}

/**
 * int32Value is int32(x.IntValue()): the analysis controller compares counters as int32, so a huge
 * value wraps as it does there (MaxInt64 becomes -1). Only absurd specs see the difference.
 */
export function int32Value(v: IntOrString | undefined): number | undefined {
  const n = int64Of(v);
  return n === undefined ? undefined : Number(BigInt.asIntN(32, n));
}

/** effectiveCount: a metric with neither count nor interval measures once; with only an interval, without end. */
export function effectiveCount(m: ArgoMetric): number | undefined {
  const c = intValue(m.count);
  if (c === undefined || c === 0) return m.interval ? undefined : 1;
  return int32Value(m.count);
}

/** validateMetric gives Argo's reason a metric is invalid, or undefined. */
export function validateMetric(m: ArgoMetric): string | undefined {
  const count = intValue(m.count) ?? 0;
  const failureLimit = intValue(m.failureLimit) ?? 0;
  const successLimit = intValue(m.consecutiveSuccessLimit) ?? 0;
  const inconclusiveLimit = intValue(m.inconclusiveLimit) ?? 0;
  if (successLimit < 0) return 'consecutiveSuccessLimit must be >= 0';
  if (failureLimit < -1) return 'failureLimit must be >= 0, or -1 to be disabled';
  if (successLimit === 0 && failureLimit === -1) return 'failureLimit and consecutiveSuccessLimit cannot both be disabled';
  if (inconclusiveLimit < 0) return 'inconclusiveLimit must be >= 0';
  const errorLimit = intValue(m.consecutiveErrorLimit);
  if (errorLimit !== undefined && errorLimit < 0) return 'consecutiveErrorLimit must be >= 0';
  if (count > 0) {
    if (failureLimit >= 0 && count < failureLimit + successLimit) {
      return `count (${count}) must be >= failureLimit + consecutiveSuccessLimit (${failureLimit} + ${successLimit}) if both >= 0`;
    }
    if (failureLimit < 0 && count < successLimit) return 'count must be >= consecutiveSuccessLimit';
    if (count < inconclusiveLimit) return 'count must be >= inconclusiveLimit';
  }
  if (count > 1 && !m.interval) return 'interval must be specified when count > 1';
  if (m.interval) {
    const d = parseGoDuration(m.interval);
    if ('error' in d) return `invalid interval string: ${d.error}`;
  }
  if (m.initialDelay) {
    const d = parseGoDuration(m.initialDelay);
    if ('error' in d) return `invalid startDelay string: ${d.error}`;
  }
  return undefined;
}

/** validateRun: the metrics (at least one, unique names, each valid) and the dry-run and retention rules. */
export function validateRun(spec: ArgoRunSpec): string | undefined {
  if (spec.metrics.length === 0) return 'no metrics specified';
  const seen = new Set<string>();
  for (const [i, m] of spec.metrics.entries()) {
    if (seen.has(m.name)) return `metrics[${i}]: duplicate name '${m.name}'`;
    seen.add(m.name);
    const why = validateMetric(m);
    if (why) return `metrics[${i}]: ${why}`;
  }
  const dry = matchRules(spec.dryRun ?? [], spec.metrics, 'dryRun');
  if ('error' in dry) return dry.error;
  const keep = matchRules(spec.measurementRetention ?? [], spec.metrics, 'measurementRetention');
  if ('error' in keep) return keep.error;
  return undefined;
}

/**
 * goRegExp reads a rule's metricName as Go's regexp (RE2) would, for the patterns such rules use:
 * names, `.*`, classes, alternations, a leading `(?i)`, `\\A` and `\\z`. What RE2 refuses and
 * JavaScript would take (lookaround, backreferences) compiles to nothing, as Argo ignores a pattern it
 * cannot compile: the rule matches no metric. Other RE2-only syntax (POSIX classes, `\\Q...\\E`,
 * named groups `(?P<n>...)`) is read by JavaScript's rules or not at all: a rule that uses it is
 * refused as matching nothing, which Argo would not do; no such rule is known in the wild.
 */
export function goRegExp(pattern: string): RegExp | undefined {
  if (/\(\?<?[=!]|\\[1-9]/.test(pattern)) return undefined;
  let flags = 'u';
  let p = pattern;
  // Go's leading flags; U (ungreedy) has no JavaScript form, so such a rule matches nothing here.
  const lead = /^\(\?([imsU]+)\)/.exec(p);
  if (lead) {
    const given = lead[1] ?? '';
    if (given.includes('U')) return undefined;
    flags += [...new Set(given)].join('');
    p = p.slice(lead[0].length);
  }
  p = p.replace(/\\A/g, '^').replace(/\\z/g, '$');
  try {
    return new RegExp(p, flags);
  } catch {
    return undefined;
  }
}

// Argo matches a rule's metricName as an unanchored Go regular expression and requires each rule to
// match some metric.
function matchRules<R extends { metricName: string }>(rules: R[], metrics: ArgoMetric[], field: string): { byName: Map<string, R> } | { error: string } {
  const byName = new Map<string, R>();
  for (const [i, rule] of rules.entries()) {
    const re = goRegExp(rule.metricName);
    let n = 0;
    for (const m of metrics) {
      if (re?.test(m.name)) {
        byName.set(m.name, rule);
        n++;
      }
    }
    if (n < 1) return { error: `${field}[${i}]: Rule didn't match any metric name(s)` };
  }
  return { byName };
}

function dryRunNames(spec: ArgoRunSpec): Set<string> {
  const r = matchRules(spec.dryRun ?? [], spec.metrics, 'dryRun');
  return new Set('byName' in r ? r.byName.keys() : []);
}

function resultOf(status: ArgoRunStatus, name: string): ArgoMetricResult | undefined {
  return status.metricResults.find((r) => r.name === name);
}

function last(r: ArgoMetricResult | undefined): ArgoMeasurement | undefined {
  return r?.measurements[r.measurements.length - 1];
}

/** terminating: the run was told to stop, or a metric that is not dry-run has failed, erred or is inconclusive. */
export function terminating(status: ArgoRunStatus, terminate = false): boolean {
  return terminate || status.metricResults.some((r) => !r.dryRun && (r.phase === 'Failed' || r.phase === 'Error' || r.phase === 'Inconclusive'));
}

function durationMs(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const d = parseGoDuration(text);
  return 'ms' in d ? d.ms : undefined;
}

/** dueMetrics names the metrics that take a measurement at `now`, as generateMetricTasks chooses them. */
export function dueMetrics(spec: ArgoRunSpec, status: ArgoRunStatus, now: number, terminate = false): string[] {
  const stopping = terminating(status, terminate);
  const due: string[] = [];
  for (const m of spec.metrics) {
    const r = resultOf(status, m.name);
    if (r && completed(r.phase)) continue;
    const lm = last(r);
    // A measurement in progress (a job metric's Job runs) is resumed once its resumeAt has come, or at
    // once to be terminated when the run stops.
    if (lm && inProgress(lm)) {
      if (!stopping && lm.resumeAt !== undefined && lm.resumeAt > now) continue;
      due.push(m.name);
      continue;
    }
    if (stopping) continue;
    if (!lm) {
      if (m.initialDelay) {
        // Argo starts the run's clock at its first assessment, so a delayed metric waits at least one pass.
        if (status.startedAt === undefined) continue;
        const d = durationMs(m.initialDelay);
        if (d === undefined || status.startedAt + d > now) continue;
      }
      due.push(m.name);
      continue;
    }
    const count = effectiveCount(m);
    if (count !== undefined && (r?.count ?? 0) >= count) continue;
    let interval = ERROR_RETRY_MS;
    if (lm.phase !== 'Error' && m.interval) {
      const d = durationMs(m.interval);
      if (d === undefined) continue;
      interval = d;
    }
    // Go's After is strict: a measurement is overdue only once the interval has fully passed.
    if (now > (lm.finishedAt ?? lm.startedAt) + interval) due.push(m.name);
  }
  return due;
}

function emptyResult(name: string, dryRun: boolean): ArgoMetricResult {
  return { name, phase: 'Running', dryRun, count: 0, successful: 0, failed: 0, inconclusive: 0, error: 0, consecutiveError: 0, consecutiveSuccess: 0, measurements: [] };
}

/** inProgress: a measurement not finished (Argo: FinishedAt nil), resumed rather than taken anew. */
export function inProgress(m: ArgoMeasurement): boolean {
  return m.finishedAt === undefined && !completed(m.phase);
}

/**
 * record adds a measurement to its metric, as runMeasurements does: a completed one is counted (and
 * given its finish time if it has none); one that resumes a measurement in progress takes its place,
 * any other is appended.
 */
export function record(status: ArgoRunStatus, spec: ArgoRunSpec, name: string, measured: ArgoMeasurement, now = measured.finishedAt ?? measured.startedAt): ArgoRunStatus {
  const prev = resultOf(status, name);
  const r: ArgoMetricResult = prev ? { ...prev, measurements: [...prev.measurements] } : emptyResult(name, dryRunNames(spec).has(name));
  const m = completed(measured.phase) && measured.finishedAt === undefined ? { ...measured, finishedAt: now } : measured;
  const resumed = r.measurements.length > 0 && inProgress(r.measurements[r.measurements.length - 1]!);
  switch (m.phase) {
    case 'Successful':
      r.successful++;
      r.count++;
      r.consecutiveError = 0;
      r.consecutiveSuccess++;
      break;
    case 'Failed':
      r.failed++;
      r.count++;
      r.consecutiveError = 0;
      r.consecutiveSuccess = 0;
      break;
    case 'Inconclusive':
      r.inconclusive++;
      r.count++;
      r.consecutiveError = 0;
      r.consecutiveSuccess = 0;
      break;
    case 'Error':
      r.error++;
      r.consecutiveError++;
      r.consecutiveSuccess = 0;
      break;
    default:
      break;
  }
  if (resumed) r.measurements[r.measurements.length - 1] = m;
  else r.measurements.push(m);
  const metricResults = prev ? status.metricResults.map((x) => (x.name === name ? r : x)) : [...status.metricResults, r];
  return { ...status, metricResults };
}

/** limitsBreached is assessMetricFailureInconclusiveOrError: the last limit that holds wins (Error over Inconclusive over Failed). */
export function limitsBreached(m: ArgoMetric, r: ArgoMetricResult): { phase?: ArgoPhase; message: string } {
  let out: { phase?: ArgoPhase; message: string } = { message: '' };
  const failureLimit = int32Value(m.failureLimit) ?? 0;
  if (failureLimit >= 0 && r.failed > failureLimit) out = { phase: 'Failed', message: `failed (${r.failed}) > failureLimit (${failureLimit})` };
  const inconclusiveLimit = int32Value(m.inconclusiveLimit) ?? 0;
  if (r.inconclusive > inconclusiveLimit) out = { phase: 'Inconclusive', message: `inconclusive (${r.inconclusive}) > inconclusiveLimit (${inconclusiveLimit})` };
  const errorLimit = int32Value(m.consecutiveErrorLimit) ?? DEFAULT_CONSECUTIVE_ERROR_LIMIT;
  if (r.consecutiveError > errorLimit) out = { phase: 'Error', message: `consecutiveErrors (${r.consecutiveError}) > consecutiveErrorLimit (${errorLimit})` };
  return out;
}

/** metricPhase is assessMetricStatus. */
export function metricPhase(m: ArgoMetric, r: ArgoMetricResult, stopping: boolean): ArgoPhase {
  if (completed(r.phase)) return r.phase;
  const lm = last(r);
  if (!lm) return stopping ? 'Successful' : 'Pending';
  if (!completed(lm.phase)) return 'Running';
  const breached = limitsBreached(m, r);
  if (breached.phase) return breached.phase;
  const successLimit = intValue(m.consecutiveSuccessLimit);
  const successApplies = successLimit !== undefined && successLimit > 0;
  if (successApplies && r.consecutiveSuccess >= (int32Value(m.consecutiveSuccessLimit) ?? 0)) return 'Successful';
  const count = effectiveCount(m);
  if (count !== undefined && r.count >= count) {
    const failureLimit = intValue(m.failureLimit);
    const failureApplies = failureLimit === undefined || failureLimit >= 0;
    // The count is spent without the success streak asked for: not a failure if failures stayed in bounds.
    if (successApplies) return failureApplies ? 'Inconclusive' : 'Failed';
    return 'Successful';
  }
  return stopping ? 'Successful' : 'Running';
}

function worse(current: ArgoPhase, next: ArgoPhase): boolean {
  return ORDER.indexOf(next) > ORDER.indexOf(current);
}

/** assess is assessRunStatus: each metric's phase, then the run's (Running until every metric is done; then the worst, dry-run metrics aside). */
export function assess(spec: ArgoRunSpec, status: ArgoRunStatus, now: number, terminate = false): ArgoRunStatus {
  const stopping = terminating(status, terminate);
  const dry = dryRunNames(spec);
  const out: ArgoRunStatus = { ...status, startedAt: status.startedAt ?? now, metricResults: [...status.metricResults] };
  let worst: ArgoPhase | undefined;
  let message = terminate ? 'Run Terminated' : '';
  let everything = true;
  for (const m of spec.metrics) {
    const i = out.metricResults.findIndex((r) => r.name === m.name);
    if (i < 0) {
      everything = false;
      continue;
    }
    let r = out.metricResults[i] as ArgoMetricResult;
    const phase = metricPhase(m, r, stopping);
    if (phase !== r.phase) {
      const lm = last(r);
      r = { ...r, phase, ...(lm ? { message: lm.message } : {}) };
    }
    if (!completed(phase)) everything = false;
    else {
      const breached = limitsBreached(m, r);
      if (!dry.has(m.name)) {
        if (worst === undefined || worse(worst, phase)) {
          worst = phase;
          if (breached.message) message = `Metric "${m.name}" assessed ${phase} due to ${breached.message}${r.message ? `: "Error Message: ${r.message}"` : ''}`;
        }
      } else {
        // A dry-run metric is reported, never held against the run.
        if (worst === undefined) worst = 'Successful';
        if (breached.message) r = { ...r, message: `Metric assessed ${phase} due to ${breached.message}` };
      }
    }
    out.metricResults[i] = r;
  }
  message = message.trim();
  let phase: ArgoPhase;
  if (stopping) phase = worst ?? 'Successful';
  else if (!everything || worst === undefined) {
    phase = 'Running';
    message = '';
  } else phase = worst;
  if (phase !== status.phase) {
    out.phase = phase;
    out.message = message;
  }
  return out;
}

/** trim keeps each metric's newest measurements: its retention rule's limit, or Argo's 10. */
export function trim(spec: ArgoRunSpec, status: ArgoRunStatus): ArgoRunStatus {
  const rules = matchRules(spec.measurementRetention ?? [], spec.metrics, 'measurementRetention');
  const byName = 'byName' in rules ? rules.byName : new Map<string, { limit: number }>();
  return {
    ...status,
    metricResults: status.metricResults.map((r) => {
      // Argo trims only the results of metrics its spec still has.
      if (!spec.metrics.some((m) => m.name === r.name)) return r;
      const rule = byName.get(r.name);
      const limit = rule && rule.limit > 0 ? rule.limit : MEASUREMENT_HISTORY_LIMIT;
      return r.measurements.length > limit ? { ...r, measurements: r.measurements.slice(-limit) } : r;
    }),
  };
}

/** nextDue is calculateNextReconcileTime: the earliest moment a metric wants its next measurement, if any. */
export function nextDue(spec: ArgoRunSpec, status: ArgoRunStatus, now: number): number | undefined {
  let at: number | undefined;
  const earliest = (t: number): void => {
    if (at === undefined || t < at) at = t;
  };
  for (const m of spec.metrics) {
    const r = resultOf(status, m.name);
    if (r && completed(r.phase)) continue;
    const lm = last(r);
    if (!lm) {
      const d = durationMs(m.initialDelay);
      if (m.initialDelay && d !== undefined) earliest((status.startedAt ?? now) + d);
      continue;
    }
    const count = effectiveCount(m);
    if (count !== undefined && (r?.count ?? 0) >= count) continue;
    let interval: number | undefined;
    if (lm.phase === 'Error') interval = ERROR_RETRY_MS;
    else if (m.interval) interval = durationMs(m.interval);
    if (interval === undefined) continue;
    earliest((lm.finishedAt ?? lm.startedAt) + interval);
  }
  return at;
}

/** startRun is an AnalysisRun's status before its first pass. */
export function startRun(): ArgoRunStatus {
  return { phase: 'Pending', metricResults: [] };
}

/**
 * pass is one reconcile of the run after the shell has taken the due measurements: record them, assess,
 * trim. A run whose spec Argo would refuse ends in Error with Argo's message.
 */
export function pass(spec: ArgoRunSpec, status: ArgoRunStatus, now: number, taken: { name: string; measurement: ArgoMeasurement }[], terminate = false): ArgoRunStatus {
  if (completed(status.phase)) return status;
  const invalid = validateRun(spec);
  if (invalid) return { ...status, phase: 'Error', message: `Analysis spec invalid: ${invalid}` };
  let s = status;
  for (const t of taken) s = record(s, spec, t.name, t.measurement, now);
  return trim(spec, assess(spec, s, now, terminate));
}
