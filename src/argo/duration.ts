// Argo's DurationString is Go's time.ParseDuration ("5m", "1h30m", "300ms", "1.5s", "-1s"): an
// AnalysisTemplate's interval and initialDelay must mean here what they mean to Argo, so this reads
// Go's grammar exactly rather than the controller's own flag durations (src/runtime/config.ts), which
// take a bare number as seconds and that Go refuses.

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** parseGoDuration gives milliseconds, or an error worded as Go words it. */
export function parseGoDuration(text: string): { ms: number } | { error: string } {
  const bad = { error: `time: invalid duration "${text}"` };
  let s = text;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return { ms: 0 };
  if (s === '') return bad;
  let total = 0;
  while (s !== '') {
    const m = /^(\d*)(?:\.(\d*))?/.exec(s);
    const whole = m?.[1] ?? '';
    const frac = m?.[2];
    // Go needs a digit on at least one side of the dot.
    if (whole === '' && (frac === undefined || frac === '')) return bad;
    s = s.slice((m?.[0] ?? '').length);
    // Go's unit is everything up to the next digit or dot: "1h-1m" has the unit "h-".
    const unit = /^[^\d.]*/.exec(s)?.[0] ?? '';
    if (unit === '') return { error: `time: missing unit in duration "${text}"` };
    if (!(unit in UNITS)) return { error: `time: unknown unit "${unit}" in duration "${text}"` };
    s = s.slice(unit.length);
    total += Number(`${whole || '0'}.${frac || '0'}`) * (UNITS[unit] ?? 0);
  }
  // Go's Duration is an int64 of nanoseconds: about 292 years.
  if (total * 1e6 > 9.223372036854775e18) return { error: `time: invalid duration "${text}"` };
  return { ms: sign * total };
}
