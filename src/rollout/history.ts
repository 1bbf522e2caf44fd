// The measurement history of a rollout: the last few outcomes of each gate of the revision being
// rolled, carried in the status so that `kubectl phased-rollout status` and the dashboard show what
// was measured (dry-run gates too). Bounded: a run of equal outcomes is one entry, each gate keeps
// HISTORY_PER_GATE entries, at most MAX_GATES_KEPT gates, values cut to MAX_VALUE characters.
import type { NamedVerdict } from './gates.js';
import type { GateHistory, Measurement } from './types.js';

/** HISTORY_PER_GATE is how many runs of outcomes each gate keeps, newest last. */
export const HISTORY_PER_GATE = 5;
/** MAX_GATES_KEPT bounds the gates kept (gates edited mid-rollout add names): the least recent go first. */
export const MAX_GATES_KEPT = 12;
/** MAX_VALUE bounds one measured value's text. */
export const MAX_VALUE = 64;

/**
 * recordMeasurements adds one check's verdicts to the history: an outcome equal to the gate's last
 * one extends that entry (count, value, time); another outcome starts a new entry.
 */
export function recordMeasurements(h: GateHistory | undefined, results: readonly NamedVerdict[], nowMs: number): GateHistory {
  const out: GateHistory = { ...h };
  const at = new Date(nowMs).toISOString();
  for (const r of results) {
    const entries = out[r.name] ?? [];
    const last = entries[entries.length - 1];
    const m: Measurement = { result: r.verdict.result, at, count: last?.result === r.verdict.result ? last.count + 1 : 1 };
    if (r.verdict.value !== undefined) m.value = r.verdict.value.slice(0, MAX_VALUE);
    if (r.dryRun) m.dryRun = true;
    out[r.name] = (last?.result === r.verdict.result ? [...entries.slice(0, -1), m] : [...entries, m]).slice(-HISTORY_PER_GATE);
  }
  const names = Object.keys(out);
  if (names.length <= MAX_GATES_KEPT) return out;
  const lastAt = (n: string) => out[n]?.[out[n].length - 1]?.at ?? '';
  // ISO timestamps order as strings. Not localeCompare: it is slower and loads ICU's collation data
  // (~3 MB of the Node.js binary's pages stay resident once touched).
  const byAt = (a: string, b: string) => (lastAt(a) < lastAt(b) ? -1 : lastAt(a) > lastAt(b) ? 1 : 0);
  for (const n of names.sort(byAt).slice(0, names.length - MAX_GATES_KEPT)) delete out[n];
  return out;
}

/**
 * historyShape is what of the history is worth a status write: each gate's entries and their
 * outcomes. A repeated outcome only updates the count of its entry, written with the next status.
 */
export function historyShape(h: GateHistory | undefined): string {
  if (!h) return '';
  return Object.keys(h)
    .sort()
    .map((n) => `${n}:${(h[n] ?? []).map((m) => m.result).join(',')}`)
    .join(';');
}

const RESULTS: ReadonlySet<string> = new Set(['pass', 'fail', 'error', 'inconclusive']);

/** isHistory checks a history read back from the status annotation (anyone who may edit the StatefulSet can write it). */
export function isHistory(v: unknown): v is GateHistory {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  const gates = Object.values(v as Record<string, unknown>);
  if (gates.length > MAX_GATES_KEPT) return false;
  return gates.every(
    (entries) =>
      Array.isArray(entries) &&
      entries.length <= HISTORY_PER_GATE &&
      entries.every((m: Record<string, unknown>) => m && typeof m === 'object' && RESULTS.has(m.result as string) && typeof m.at === 'string' && Number.isInteger(m.count) && (m.count as number) > 0 && (m.value === undefined || (typeof m.value === 'string' && m.value.length <= MAX_VALUE)) && (m.dryRun === undefined || m.dryRun === true)),
  );
}
