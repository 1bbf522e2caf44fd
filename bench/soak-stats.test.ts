import { metricValues, slopePerMinute, svgPlot, verdict, type Sample } from './soak-stats.js';

const EXPO = [
  '# HELP nodejs_heap_size_used_bytes Process heap size used from Node.js in bytes.',
  '# TYPE nodejs_heap_size_used_bytes gauge',
  'nodejs_heap_size_used_bytes 52428800',
  'nodejs_heap_size_used_bytes_extra 1',
  'nodejs_eventloop_lag_p99_seconds 0.0123',
  'nodejs_active_handles{type="Socket"} 7',
  'nodejs_active_handles{type="Timer"} 3',
  'nodejs_active_handles_total 10',
  'phased_rollout_x{a="b"} NaN',
].join('\n');

describe('metricValues', () => {
  it.each([
    ['an unlabelled gauge, not a longer name sharing its prefix', 'nodejs_heap_size_used_bytes', 52428800],
    ['a float', 'nodejs_eventloop_lag_p99_seconds', 0.0123],
    ['one label value', 'nodejs_active_handles{type="Socket"}', 7],
    ['a total', 'nodejs_active_handles_total', 10],
  ])('%s', (_what, name, want) => {
    expect(metricValues(EXPO, [name])[name]).toBe(want);
  });

  it('leaves out what is absent or not a number', () => {
    expect(metricValues(EXPO, ['missing', 'phased_rollout_x{a="b"}', 'nodejs_active_handles'])).toEqual({});
  });
});

describe('slopePerMinute', () => {
  it.each([
    ['flat', [{ t: 0, y: 5 }, { t: 60_000, y: 5 }, { t: 120_000, y: 5 }], 0],
    ['1 per minute', [{ t: 0, y: 0 }, { t: 60_000, y: 1 }, { t: 120_000, y: 2 }], 1],
    ['noise around a rise of 2 per minute', [{ t: 0, y: 1 }, { t: 30_000, y: 1 }, { t: 60_000, y: 3 }, { t: 90_000, y: 3 }], 1.6],
  ])('%s', (_what, points, want) => {
    expect(slopePerMinute(points)).toBeCloseTo(want, 6);
  });

  it('is NaN with fewer than two points or a single instant', () => {
    expect(slopePerMinute([{ t: 0, y: 1 }])).toBeNaN();
    expect(slopePerMinute([{ t: 5, y: 1 }, { t: 5, y: 2 }])).toBeNaN();
  });
});

const sample = (t: number, rssMb: number, heapMb: number, eldP99Ms = 12): Sample => ({ t, rssMb, heapMb, eldP99Ms, handles: 20, sockets: 8, fds: 30 });

describe('verdict', () => {
  it('judges only after the warm-up and meets the targets when flat', () => {
    const s = [sample(0, 50, 10, 400), sample(300_000, 140, 40), sample(900_000, 141, 41), sample(1_500_000, 140, 40), sample(2_100_000, 141, 40)];
    const v = verdict(s, 300_000);
    expect(v.samples).toBe(4);
    expect(v.missed).toEqual([]);
    expect(v.rssMb).toEqual({ first: 140, last: 141, max: 141 });
    expect(v.eldP99MaxMs).toBe(12);
  });

  it('names each missed target', () => {
    const s = [sample(0, 100, 20), sample(600_000, 103, 22, 75)];
    expect(verdict(s, 0).missed).toEqual([
      'RSS grows 3.00 MB per 10 min (target <= 1)',
      'heap grows 2.00 MB per 10 min (target <= 1)',
      'event-loop delay p99 reached 75.0 ms (target < 50)',
    ]);
  });

  it('misses every target when nothing was sampled after the warm-up', () => {
    expect(verdict([sample(0, 1, 1)], 60_000).missed).toHaveLength(3);
  });
});

describe('svgPlot', () => {
  it('draws both series, the marks and escapes the title', () => {
    const svg = svgPlot([sample(0, 100, 20), sample(10_000, 120, 30)], [{ t: 5_000, label: 'API server restart' }], { title: 'soak <smoke>', warmupMs: 5_000 });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('soak &lt;smoke&gt;');
    expect(svg.match(/<path d="M/g)).toHaveLength(2);
    expect(svg).toContain('API server restart');
    expect(svg).not.toMatch(/NaN|undefined/);
  });
});
