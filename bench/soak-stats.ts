// The pure part of bench:soak: reading the controller's own /metrics, the growth of a series (least
// squares), the verdict against the targets, and the SVG plot of RSS and heap over time.
// Kept apart from bench/soak.ts (which drives the cluster) so that it is tested in tables.

/** Sample is one 10-second reading of the controller process. */
export interface Sample {
  /** ms since the soak started */
  t: number;
  rssMb: number;
  heapMb: number;
  /** V8's heap as committed (used plus free pages it keeps) and memory outside it (Buffers, TLS) */
  heapTotalMb?: number;
  externalMb?: number;
  /** event-loop delay p99 over the window since the previous scrape (prom-client resets it) */
  eldP99Ms: number;
  handles: number;
  sockets: number;
  fds: number;
}

/** Mark is a moment the plot names (a Prometheus restart, an API server restart). */
export interface Mark {
  t: number;
  label: string;
}

/**
 * metricValues reads the unlabelled value of each named series (or the sum over labels matching
 * `label="value"` when a name is given as `name{label="value"}`) from a Prometheus text exposition.
 */
export function metricValues(text: string, names: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const want of names) {
    const m = /^([^{]+)(\{.*\})?$/.exec(want);
    const name = m?.[1] ?? want;
    const filter = m?.[2]?.slice(1, -1);
    let sum: number | undefined;
    for (const line of text.split('\n')) {
      if (!line.startsWith(name) || line.startsWith('#')) continue;
      const rest = line.slice(name.length);
      if (!(rest.startsWith(' ') || rest.startsWith('{'))) continue; // a longer name sharing the prefix
      const labels = rest.startsWith('{') ? rest.slice(1, rest.indexOf('}')) : '';
      if (filter ? !labels.split(',').includes(filter) : labels !== '') continue;
      const value = Number(rest.slice(rest.lastIndexOf(' ') + 1));
      if (Number.isFinite(value)) sum = (sum ?? 0) + value;
    }
    if (sum !== undefined) out[want] = sum;
  }
  return out;
}

/** slopePerMinute is the least-squares slope of y over t (ms), in y per minute; NaN for < 2 points. */
export function slopePerMinute(points: { t: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mt = points.reduce((s, p) => s + p.t, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - mt) * (p.y - my);
    den += (p.t - mt) ** 2;
  }
  return den === 0 ? NaN : (num / den) * 60_000;
}

/** Targets are issue 18's: growth per 10 minutes after the warm-up, and the event-loop delay. */
export const TARGETS = { rssMbPer10Min: 1, heapMbPer10Min: 1, eldP99Ms: 50 } as const;

/** Verdict summarizes the samples after the warm-up against TARGETS. */
export interface Verdict {
  samples: number;
  warmupMs: number;
  rssMbPer10Min: number;
  heapMbPer10Min: number;
  /** the worst 10-second p99 after the warm-up, and the median of them */
  eldP99MaxMs: number;
  eldP99MedianMs: number;
  rssMb: { first: number; last: number; max: number };
  heapMb: { first: number; last: number; max: number };
  heapTotalMb: { first: number; last: number; max: number };
  externalMb: { first: number; last: number; max: number };
  /** growth of heap total and external memory: where RSS growth comes from when heap used is flat */
  heapTotalMbPer10Min: number;
  externalMbPer10Min: number;
  handles: { first: number; last: number; max: number };
  sockets: { first: number; last: number; max: number };
  fds: { first: number; last: number; max: number };
  /** which targets were missed (empty: all met) */
  missed: string[];
}

/** verdict judges the samples taken after `warmupMs`. */
export function verdict(samples: Sample[], warmupMs: number): Verdict {
  const after = samples.filter((s) => s.t >= warmupMs);
  const range = (k: keyof Sample) => ({ first: after[0]?.[k] ?? NaN, last: after.at(-1)?.[k] ?? NaN, max: Math.max(...after.map((s) => s[k] ?? NaN)) });
  const slope = (k: keyof Sample) => slopePerMinute(after.map((s) => ({ t: s.t, y: s[k] ?? NaN }))) * 10;
  const eld = after.map((s) => s.eldP99Ms).sort((a, b) => a - b);
  const v: Verdict = {
    samples: after.length,
    warmupMs,
    rssMbPer10Min: slopePerMinute(after.map((s) => ({ t: s.t, y: s.rssMb }))) * 10,
    heapMbPer10Min: slopePerMinute(after.map((s) => ({ t: s.t, y: s.heapMb }))) * 10,
    eldP99MaxMs: eld.at(-1) ?? NaN,
    eldP99MedianMs: eld[Math.floor(eld.length / 2)] ?? NaN,
    rssMb: range('rssMb'),
    heapMb: range('heapMb'),
    heapTotalMb: range('heapTotalMb'),
    externalMb: range('externalMb'),
    heapTotalMbPer10Min: slope('heapTotalMb'),
    externalMbPer10Min: slope('externalMb'),
    handles: range('handles'),
    sockets: range('sockets'),
    fds: range('fds'),
    missed: [],
  };
  if (!(v.rssMbPer10Min <= TARGETS.rssMbPer10Min)) v.missed.push(`RSS grows ${v.rssMbPer10Min.toFixed(2)} MB per 10 min (target <= ${TARGETS.rssMbPer10Min})`);
  if (!(v.heapMbPer10Min <= TARGETS.heapMbPer10Min)) v.missed.push(`heap grows ${v.heapMbPer10Min.toFixed(2)} MB per 10 min (target <= ${TARGETS.heapMbPer10Min})`);
  if (!(v.eldP99MaxMs < TARGETS.eldP99Ms)) v.missed.push(`event-loop delay p99 reached ${v.eldP99MaxMs.toFixed(1)} ms (target < ${TARGETS.eldP99Ms})`);
  return v;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * svgPlot draws RSS and heap used (MB) against minutes, with the warm-up shaded and the marks as
 * vertical lines. A self-contained SVG (no fonts or scripts fetched), small enough to commit to docs/.
 */
export function svgPlot(samples: Sample[], marks: Mark[], o: { title: string; warmupMs: number }): string {
  const W = 760;
  const H = 340;
  const L = 56;
  const R = 16;
  const T = 36;
  const B = 44;
  const tMax = Math.max(60_000, ...samples.map((s) => s.t));
  const yMax = Math.max(10, ...samples.map((s) => s.rssMb)) * 1.1;
  const x = (t: number) => L + (t / tMax) * (W - L - R);
  const y = (v: number) => T + (1 - v / yMax) * (H - T - B);
  const line = (k: 'rssMb' | 'heapMb') => samples.map((s, i) => `${i === 0 ? 'M' : 'L'}${x(s.t).toFixed(1)},${y(s[k]).toFixed(1)}`).join(' ');
  const minutes = tMax / 60_000;
  const step = minutes <= 2 ? 0.5 : minutes <= 10 ? 1 : 5;
  const xTicks: string[] = [];
  for (let m = 0; m <= minutes + 1e-9; m += step) xTicks.push(`<line x1="${x(m * 60_000).toFixed(1)}" y1="${H - B}" x2="${x(m * 60_000).toFixed(1)}" y2="${H - B + 4}" stroke="#555"/><text x="${x(m * 60_000).toFixed(1)}" y="${H - B + 16}" text-anchor="middle">${m}</text>`);
  const yStep = yMax > 400 ? 100 : yMax > 100 ? 50 : 10;
  const yTicks: string[] = [];
  for (let v = 0; v <= yMax; v += yStep) yTicks.push(`<line x1="${L}" y1="${y(v).toFixed(1)}" x2="${W - R}" y2="${y(v).toFixed(1)}" stroke="#eee"/><text x="${L - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v}</text>`);
  const markLines = marks.map((m) => `<line x1="${x(m.t).toFixed(1)}" y1="${T}" x2="${x(m.t).toFixed(1)}" y2="${H - B}" stroke="#c33" stroke-dasharray="4 3"/><text x="${(x(m.t) + 4).toFixed(1)}" y="${T + 12}" fill="#c33">${esc(m.label)}</text>`);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<rect x="${L}" y="${T}" width="${(x(Math.min(o.warmupMs, tMax)) - L).toFixed(1)}" height="${H - T - B}" fill="#f4f4f4"/>`,
    `<text x="${L}" y="18" font-size="13">${esc(o.title)}</text>`,
    ...yTicks,
    ...xTicks,
    `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="#555"/>`,
    `<text x="${(L + W - R) / 2}" y="${H - 8}" text-anchor="middle">minutes (shaded: warm-up, not judged)</text>`,
    `<text x="14" y="${(T + H - B) / 2}" transform="rotate(-90 14 ${(T + H - B) / 2})" text-anchor="middle">MB</text>`,
    ...markLines,
    `<path d="${line('rssMb')}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>`,
    `<path d="${line('heapMb')}" fill="none" stroke="#2ca02c" stroke-width="1.5"/>`,
    `<text x="${W - R - 150}" y="${T + 12}" fill="#1f77b4">RSS</text><text x="${W - R - 100}" y="${T + 12}" fill="#2ca02c">heap used</text>`,
    '</svg>',
    '',
  ].join('\n');
}
