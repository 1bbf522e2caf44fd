// The golden comparison: the same generated cases judged by our TypeScript (src/argo) and by Argo
// Rollouts' own code (hack/argo-oracle, built from the Go module proxy), line for line. Ours is
// driven as the oracle drives Argo's controller: a reconcile at once after one that changed the run,
// else at the next wake-up Argo asks for (plus a millisecond, as a real queue is late); a reconcile
// that would need a measurement beyond the script is not made (the oracle's "exhausted").

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { compileCondition, evalCondition, type ArgoValue } from '../../src/argo/expr.js';
import { measurePrometheus } from '../../src/argo/prometheus.js';
import { parsePromFloat } from '../../src/prometheus/verdict.js';
import { completed } from '../../src/argo/types.js';
import { dueMetrics, nextDue, pass, startRun } from '../../src/argo/run.js';
import type { ArgoRunSpec, ArgoRunStatus } from '../../src/argo/types.js';
import type { EvalCase, RunCase } from './cases.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const SCRIPT = resolve(ROOT, 'hack', 'argo-oracle.sh');

/** oracle builds (or finds) the oracle's binary; with `cachedOnly`, only finds it. */
export function oracle(cachedOnly: boolean): string | undefined {
  if (cachedOnly) {
    const r = spawnSync('bash', [SCRIPT, '--cached'], { encoding: 'utf8' });
    const path = r.stdout.trim().split('\n').pop() ?? '';
    return r.status === 0 && existsSync(path) ? path : undefined;
  }
  return execFileSync('bash', [SCRIPT], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 1_200_000 }).trim().split('\n').pop();
}

/** askOracle sends every case at once and returns the answers by id. */
export function askOracle(bin: string, cases: (RunCase | EvalCase)[]): Map<string, Record<string, unknown>> {
  const out = execFileSync(bin, [], { input: cases.map((c) => JSON.stringify(c)).join('\n') + '\n', encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, timeout: 300_000 });
  const byId = new Map<string, Record<string, unknown>>();
  for (const line of out.split('\n')) {
    if (!line.trim()) continue;
    const a = JSON.parse(line) as Record<string, unknown>;
    byId.set(String(a.id), a);
  }
  return byId;
}

function goValue(result: unknown, kind: EvalCase['resultKind']): ArgoValue {
  if (kind === 'nil') return null;
  if (kind === 'float') return typeof result === 'number' ? result : (parsePromFloat(String(result)) ?? NaN);
  if (kind === 'floats') return (result as unknown[]).map((x) => (typeof x === 'number' ? x : (parsePromFloat(String(x)) ?? NaN)));
  return result as ArgoValue;
}

/** ourEval: the value or that it is an error, as the oracle's eval mode answers. */
export function ourEval(c: EvalCase): { value: boolean } | { error: string } {
  const p = compileCondition(c.condition);
  if (!p.ok) return { error: p.error };
  const r = evalCondition(p.program, goValue(c.result, c.resultKind), c.resultKind);
  return r.ok ? { value: r.value } : { error: r.error };
}

// The run is stored as JSON, and Kubernetes' times are RFC 3339 seconds: what Argo reads back of a
// measurement's or the run's time has lost its milliseconds.
const second = (ms: number): number => Math.floor(ms / 1000) * 1000;

/** ourRun judges a run case with our judge, driven as the oracle drives Argo's controller. */
export function ourRun(c: RunCase): ArgoRunStatus & { stop: string } {
  const spec: ArgoRunSpec = { metrics: c.metrics.map((m) => m.metric), ...(c.dryRun ? { dryRun: c.dryRun } : {}), ...(c.measurementRetention ? { measurementRetention: c.measurementRetention } : {}) };
  const left = new Map(c.metrics.map((m) => [m.metric.name, [...m.measurements]]));
  let status = startRun();
  let now = 1_700_000_000_000;
  let immediate = true; // the informer's add event for the new run
  let wake: number | undefined; // the queue's earliest wake-up
  for (let i = 0; i < 10_000; i++) {
    if (completed(status.phase)) return { ...status, stop: 'completed' };
    if (immediate) {
      immediate = false;
      // The queue holds the run once: a wake-up due by now merges with this reconcile.
      if (wake !== undefined && wake <= now) wake = undefined;
    } else {
      if (wake === undefined) return { ...status, stop: 'idle' };
      now = Math.max(wake, now) + 1;
      wake = undefined;
    }
    const due = dueMetrics(spec, status, now);
    if (due.some((n) => (left.get(n)?.length ?? 0) === 0)) return { ...status, stop: 'exhausted' };
    const taken = due.map((name) => {
      const a = left.get(name)?.shift();
      const answer = a && 'prometheus' in a ? { data: a.prometheus } : { error: a && 'error' in a ? a.error : 'no answer' };
      return { name, measurement: measurePrometheus(c.metrics.find((m) => m.metric.name === name)!.metric, answer, second(now), second(now)) };
    });
    const passed = pass(spec, status, now, taken);
    const next = passed.startedAt === undefined ? passed : { ...passed, startedAt: second(passed.startedAt) };
    // A reconcile that changed the run patches it, and the informer's update event queues it at once.
    if (JSON.stringify(next) !== JSON.stringify(status)) immediate = true;
    status = next;
    const at = nextDue(spec, status, now);
    if (at !== undefined) {
      const when = Math.max(at, now);
      wake = wake === undefined ? when : Math.min(wake, when);
    }
  }
  return { ...status, stop: 'limit' };
}

/** A disagreement: the case, what differed, both sides. */
export interface Disagreement {
  id: string;
  field: string;
  ours: unknown;
  argo: unknown;
}

/** compareEval: value against value, or error against error (the wording may differ). */
export function compareEval(c: EvalCase, argo: Record<string, unknown>): Disagreement[] {
  const ours = ourEval(c);
  const a = 'error' in argo ? 'error' : argo.value;
  const o = 'error' in ours ? 'error' : ours.value;
  return a === o ? [] : [{ id: c.id, field: 'value', ours: 'error' in ours ? ours.error : o, argo: 'error' in argo ? argo.error : a }];
}

/**
 * wording: what must read alike in a message. Limits and dry-run notes are Argo's words exactly; the
 * text of an error that a measurement carries is the evaluator's or the client's own (ours adds the
 * column; the Prometheus client library words its errors its way), so only its presence is compared.
 */
function wording(msg: unknown): string {
  const text = typeof msg === 'string' ? msg : '';
  const cut = text.indexOf('"Error Message: ');
  if (cut >= 0) return `${text.slice(0, cut)}"Error Message: …"`;
  if (/^(Metric |Analysis spec invalid|Run Terminated)/.test(text) || text === '') return text;
  return '(an error)';
}

/** compareRun: the run's phase and message, and each metric's phase, counters and measurements. */
export function compareRun(c: RunCase, argo: Record<string, unknown>): Disagreement[] {
  const ours = ourRun(c);
  const out: Disagreement[] = [];
  const same = (field: string, o: unknown, a: unknown) => {
    if (JSON.stringify(o) !== JSON.stringify(a)) out.push({ id: c.id, field, ours: o, argo: a });
  };
  if (argo.fatal) return [{ id: c.id, field: 'fatal', ours: ours.phase, argo: argo.fatal }];
  // Argo's run starts with no phase; ours names it Pending. Neither is completed.
  same('phase', ours.phase === 'Pending' ? '' : ours.phase, argo.phase);
  same('message', wording(ours.message), wording(argo.message));
  same('stop', ours.stop, argo.stop);
  const metrics = (argo.metrics ?? []) as Record<string, unknown>[];
  same('metrics', ours.metricResults.map((r) => r.name).sort(), metrics.map((m) => m.name).sort());
  for (const m of metrics) {
    const r = ours.metricResults.find((x) => x.name === m.name);
    if (!r) continue;
    for (const k of ['phase', 'dryRun', 'count', 'successful', 'failed', 'inconclusive', 'error', 'consecutiveError', 'consecutiveSuccess'] as const) same(`${r.name}.${k}`, r[k], m[k]);
    same(`${r.name}.message`, wording(r.message), wording(m.message));
    const theirs = (m.measurements as Record<string, unknown>[]).map((x) => [x.phase, x.value ?? '']);
    same(`${r.name}.measurements`, r.measurements.map((x) => [x.phase, x.value ?? '']), theirs);
  }
  return out;
}
