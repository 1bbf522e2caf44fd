// What a scenario run comes to, from the writer's records and the keys read back at the end: the numbers
// of the RESULT line. Pure, so each rule is a row in results.test.ts.

/** WriteRecord is one write of the writer: when it was scheduled, and when it was acknowledged (if ever). */
export interface WriteRecord {
  seq: number;
  key: string;
  value: string;
  sentAt: number;
  ackAt?: number;
  /** Why it failed: every attempt refused or timed out within the write's deadline. */
  error?: string;
}

/** Summary is the RESULT line's numbers. */
export interface Summary {
  acked: number;
  /** Acknowledged writes whose key is missing at the end, or holds another value. */
  lost: number;
  failed: number;
  /** The longest span (s) with no successful write, from the first write to the last. */
  unavailableS: number;
  p99Ms: number;
}

/** percentile of a list (nearest rank); NaN for an empty list. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number;
}

/** longestGap is the longest span between `start`, the sorted acknowledgement times and `end`. */
export function longestGap(acks: readonly number[], start: number, end: number): number {
  let gap = 0;
  let last = start;
  for (const t of [...acks].sort((a, b) => a - b)) {
    gap = Math.max(gap, t - last);
    last = Math.max(last, t);
  }
  return Math.max(gap, end - last);
}

/** summarize counts a run: `stored` is every key read back at the end with its value. */
export function summarize(records: readonly WriteRecord[], stored: ReadonlyMap<string, string>, start: number, end: number): Summary {
  const acked = records.filter((r) => r.ackAt !== undefined);
  return {
    acked: acked.length,
    lost: acked.filter((r) => stored.get(r.key) !== r.value).length,
    failed: records.filter((r) => r.ackAt === undefined && r.error !== undefined).length,
    unavailableS: longestGap(acked.map((r) => r.ackAt as number), start, end) / 1000,
    p99Ms: percentile(acked.map((r) => (r.ackAt as number) - r.sentAt), 99),
  };
}

/** resultLine is the scenario's last line of output; `extra` are a scenario's own `key=value` fields, last. */
export function resultLine(scenario: string, system: string, s: Summary, onNew: number, members: number, extra: readonly string[] = []): string {
  const p99 = Number.isNaN(s.p99Ms) ? 'NaN' : String(Math.round(s.p99Ms));
  return [`RESULT scenario=${scenario} system=${system} acked=${s.acked} lost=${s.lost} failed=${s.failed} unavailable_s=${s.unavailableS.toFixed(1)} p99_ms=${p99} members_on_new=${onNew}/${members}`, ...extra].join(' ');
}
