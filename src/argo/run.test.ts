import { parseGoDuration } from './duration.js';
import { fromPrometheus, goFloat } from './prometheus.js';
import { assess, dueMetrics, effectiveCount, goRegExp, int32Value, intValue, nextDue, pass, record, startRun, validateMetric } from './run.js';
import type { ArgoMeasurement, ArgoMetric, ArgoPhase, ArgoRunSpec, ArgoRunStatus } from './types.js';

// Each sequence is fed one measurement per pass at the moment the judge asks for it, as the golden
// test drives Argo's own controller; the expected phases follow Argo's rules (analysis/analysis.go).
function drive(spec: ArgoRunSpec, script: Record<string, ArgoPhase[]>, terminateAfter?: number): ArgoRunStatus {
  let s = startRun();
  let now = 1_000_000;
  const left = Object.fromEntries(Object.entries(script).map(([k, v]) => [k, [...v]]));
  for (let i = 0; i < 100; i++) {
    const terminate = terminateAfter !== undefined && i >= terminateAfter;
    const due = dueMetrics(spec, s, now, terminate).filter((n) => (left[n]?.length ?? 0) > 0);
    const taken = due.map((name) => ({ name, measurement: { phase: left[name]?.shift() as ArgoPhase, startedAt: now, finishedAt: now } satisfies ArgoMeasurement }));
    s = pass(spec, s, now, taken, terminate);
    if (s.phase !== 'Running' && s.phase !== 'Pending') return s;
    const next = nextDue(spec, s, now);
    if (next === undefined || !Object.values(left).some((l) => l.length > 0)) {
      if (!terminate && due.length === 0 && i > 0) return s;
    }
    now = next === undefined ? now + 1 : Math.max(now + 1, next + 1);
  }
  return s;
}

const m = (over: Partial<ArgoMetric> = {}): ArgoMetric => ({ name: 'm', successCondition: 'result[0] >= 0.95', ...over });
const S: ArgoPhase = 'Successful';
const F: ArgoPhase = 'Failed';
const E: ArgoPhase = 'Error';
const I: ArgoPhase = 'Inconclusive';

describe('an Argo run, phase by phase', () => {
  it.each<[string, Partial<ArgoMetric>, ArgoPhase[], ArgoPhase, string]>([
    ['one measurement, no count, no interval', {}, [S], S, ''],
    ['one failure fails at failureLimit 0', {}, [F], F, 'failed (1) > failureLimit (0)'],
    ['failureLimit counts failures in total, not in a row', { count: 5, interval: '1s', failureLimit: 1 }, [F, S, F], F, 'failed (2) > failureLimit (1)'],
    ['failures within the limit over the count pass', { count: 4, interval: '1s', failureLimit: 2 }, [F, S, F, S], S, ''],
    ['failureLimit -1 with a success streak', { count: 5, interval: '1s', failureLimit: -1, consecutiveSuccessLimit: 2 }, [F, F, F, S, S], S, ''],
    ['failureLimit -1, the streak never reached by the count', { count: 3, interval: '1s', failureLimit: -1, consecutiveSuccessLimit: 2 }, [S, F, S], F, ''],
    ['the streak not reached, failures in bounds: inconclusive', { count: 3, interval: '1s', failureLimit: 1, consecutiveSuccessLimit: 2 }, [S, F, S], I, ''],
    ['one inconclusive is over the default limit 0', { count: 3, interval: '1s' }, [I], I, ''],
    ['inconclusiveLimit 1 lets one through', { count: 3, interval: '1s', inconclusiveLimit: 1 }, [I, S, S], S, ''],
    ['errors in a row over the default 4 err', { count: 3, interval: '1s' }, [E, E, E, E, E], E, 'consecutiveErrors (5) > consecutiveErrorLimit (4)'],
    ['an error row broken by a success does not err', { count: 3, interval: '1s' }, [E, E, E, E, S, E, S, S], S, ''],
    ['errors do not spend the count', { count: 2, interval: '1s' }, [E, S, E, S], S, ''],
    ['consecutiveErrorLimit 0: the first error errs', { count: 2, interval: '1s', consecutiveErrorLimit: 0 }, [E], E, ''],
    ['a string count from args is read as a number', { count: '2', interval: '1s' }, [S, S], S, ''],
  ])('%s', (_t, over, seq, phase, message) => {
    const out = drive({ metrics: [m(over)] }, { m: seq });
    expect(out.phase).toBe(phase);
    if (message !== '') expect(out.message).toContain(message);
  });

  it('the worst metric decides the run once every metric is done; a dry-run metric never does', () => {
    const spec: ArgoRunSpec = { metrics: [m({ name: 'a' }), m({ name: 'b' })], dryRun: [{ metricName: 'b' }] };
    const out = drive(spec, { a: [S], b: [F] });
    expect(out.phase).toBe('Successful');
    expect(out.metricResults.find((r) => r.name === 'b')).toMatchObject({ phase: 'Failed', dryRun: true, message: 'Metric assessed Failed due to failed (1) > failureLimit (0)' });
    expect(drive({ metrics: [m({ name: 'a' }), m({ name: 'b' })] }, { a: [S], b: [F] }).phase).toBe('Failed');
  });

  it('a failing metric stops the others: they end Successful as terminated, the run takes the failure', () => {
    const spec: ArgoRunSpec = { metrics: [m({ name: 'a', count: 10, interval: '1s' }), m({ name: 'b' })] };
    const out = drive(spec, { a: [S, S, S, S, S, S, S, S, S, S], b: [F] });
    expect(out.phase).toBe('Failed');
    expect(out.metricResults.find((r) => r.name === 'a')?.phase).toBe('Successful');
    expect(out.metricResults.find((r) => r.name === 'a')?.count).toBeLessThan(10);
  });

  it('a metric without end runs until terminated, and terminated it is Successful', () => {
    const spec: ArgoRunSpec = { metrics: [m({ interval: '1s', failureLimit: 2 })] };
    const running = drive(spec, { m: [S, F, S] });
    expect(running.phase).toBe('Running');
    expect(drive(spec, { m: [S, F, S] }, 3).phase).toBe('Successful');
    expect(effectiveCount(m({ interval: '5m' }))).toBeUndefined();
    expect(effectiveCount(m())).toBe(1);
  });

  it('an initial delay waits a pass and then its duration', () => {
    const spec: ArgoRunSpec = { metrics: [m({ initialDelay: '30s' })] };
    const s0 = startRun();
    expect(dueMetrics(spec, s0, 0)).toEqual([]);
    const s1 = pass(spec, s0, 0, []);
    expect(s1).toMatchObject({ phase: 'Running', startedAt: 0 });
    expect(nextDue(spec, s1, 0)).toBe(30_000);
    expect(dueMetrics(spec, s1, 29_999)).toEqual([]);
    expect(dueMetrics(spec, s1, 30_000)).toEqual(['m']);
  });

  it('after an error the next measurement waits 10 s, not the interval; a measurement is overdue only after the interval', () => {
    const spec: ArgoRunSpec = { metrics: [m({ count: 3, interval: '1m' })] };
    let s = pass(spec, startRun(), 0, [{ name: 'm', measurement: { phase: 'Error', startedAt: 0, finishedAt: 0 } }]);
    expect(nextDue(spec, s, 0)).toBe(10_000);
    expect(dueMetrics(spec, s, 10_000)).toEqual([]);
    expect(dueMetrics(spec, s, 10_001)).toEqual(['m']);
    s = pass(spec, s, 10_001, [{ name: 'm', measurement: { phase: 'Successful', startedAt: 10_001, finishedAt: 10_001 } }]);
    expect(nextDue(spec, s, 10_001)).toBe(70_001);
  });

  it('keeps the newest 10 measurements, or the retention rule\'s limit', () => {
    const spec: ArgoRunSpec = { metrics: [m({ interval: '1s' })] };
    let s = startRun();
    for (let i = 0; i < 12; i++) s = pass(spec, s, i * 2000, [{ name: 'm', measurement: { phase: 'Successful', value: String(i), startedAt: 0, finishedAt: i * 2000 } }]);
    expect(s.metricResults[0]?.measurements.map((x) => x.value)).toEqual(['2', '3', '4', '5', '6', '7', '8', '9', '10', '11']);
    expect(s.metricResults[0]?.count).toBe(12);
    const kept = pass({ ...spec, measurementRetention: [{ metricName: 'm', limit: 3 }] }, s, 30_000, []);
    expect(kept.metricResults[0]?.measurements).toHaveLength(3);
  });

  it.each<[Partial<ArgoMetric>, string]>([
    [{ consecutiveSuccessLimit: -1 }, 'consecutiveSuccessLimit must be >= 0'],
    [{ failureLimit: -2 }, 'failureLimit must be >= 0, or -1 to be disabled'],
    [{ failureLimit: -1 }, 'failureLimit and consecutiveSuccessLimit cannot both be disabled'],
    [{ inconclusiveLimit: -1 }, 'inconclusiveLimit must be >= 0'],
    [{ consecutiveErrorLimit: -1 }, 'consecutiveErrorLimit must be >= 0'],
    [{ count: 2, interval: '1s', failureLimit: 3 }, 'count (2) must be >= failureLimit + consecutiveSuccessLimit (3 + 0) if both >= 0'],
    [{ count: 2, interval: '1s', failureLimit: -1, consecutiveSuccessLimit: 3 }, 'count must be >= consecutiveSuccessLimit'],
    [{ count: 2, interval: '1s', inconclusiveLimit: 3 }, 'count must be >= inconclusiveLimit'],
    [{ count: 2 }, 'interval must be specified when count > 1'],
    [{ interval: '5' }, 'invalid interval string: time: missing unit in duration "5"'],
    [{ initialDelay: '1d' }, 'invalid startDelay string: time: unknown unit "d" in duration "1d"'],
  ])('refuses %j as Argo does: %s', (over, why) => {
    expect(validateMetric(m(over))).toBe(why);
    expect(pass({ metrics: [m(over)] }, startRun(), 0, [])).toMatchObject({ phase: 'Error', message: `Analysis spec invalid: metrics[0]: ${why}` });
  });

  it('refuses a dry-run rule that names no metric, and duplicate names', () => {
    expect(pass({ metrics: [m()], dryRun: [{ metricName: 'x' }] }, startRun(), 0, []).message).toBe("Analysis spec invalid: dryRun[0]: Rule didn't match any metric name(s)");
    expect(pass({ metrics: [m(), m()] }, startRun(), 0, []).message).toBe("Analysis spec invalid: metrics[1]: duplicate name 'm'");
  });

  it('record counts as runMeasurements does', () => {
    let s = startRun();
    for (const phase of [S, S, E, F, I, E] as ArgoPhase[]) s = record(s, { metrics: [m()] }, 'm', { phase, startedAt: 0, finishedAt: 0 });
    expect(s.metricResults[0]).toMatchObject({ count: 4, successful: 2, failed: 1, inconclusive: 1, error: 2, consecutiveError: 1, consecutiveSuccess: 0 });
    // Both limits are over; Argo checks inconclusive after failed, and the later wins.
    expect(assess({ metrics: [m()] }, s, 0).phase).toBe('Inconclusive');
  });

  // A job metric's measurement is in progress while its Job runs (Argo's JobProvider.Run returns it
  // Running with resumeAt now; Resume keeps it Running with resumeAt later, until the Job ends):
  // generateMetricTasks resumes it once resumeAt has come, or at once when the run terminates, and
  // runMeasurements puts the resumed measurement in its place and counts it only once it is completed.
  it('a measurement in progress is resumed in its place, counted once completed', () => {
    const spec: ArgoRunSpec = { metrics: [{ name: 'job', provider: { job: {} } }] };
    let s = startRun();
    expect(dueMetrics(spec, s, 0)).toEqual(['job']);
    s = pass(spec, s, 0, [{ name: 'job', measurement: { phase: 'Running', startedAt: 0, resumeAt: 0, metadata: { job: 'x' } } }]);
    expect(s.phase).toBe('Running');
    expect(s.metricResults[0]).toMatchObject({ count: 0, measurements: [{ phase: 'Running' }] });
    expect(dueMetrics(spec, s, 1)).toEqual(['job']);
    s = pass(spec, s, 1, [{ name: 'job', measurement: { phase: 'Running', startedAt: 0, resumeAt: 5_000, metadata: { job: 'x' } } }]);
    expect(dueMetrics(spec, s, 4_999)).toEqual([]);
    expect(dueMetrics(spec, s, 5_000)).toEqual(['job']);
    // Terminated: resumed at once, whatever resumeAt says.
    expect(dueMetrics(spec, s, 1, true)).toEqual(['job']);
    s = pass(spec, s, 6_000, [{ name: 'job', measurement: { phase: 'Successful', startedAt: 0, metadata: { job: 'x' } } }]);
    expect(s.metricResults[0]).toMatchObject({ count: 1, successful: 1, measurements: [{ phase: 'Successful', startedAt: 0, finishedAt: 6_000 }] });
    expect(s.phase).toBe('Successful');
  });

  it('a metric in progress keeps the run Running, and a failed Job fails it', () => {
    const spec: ArgoRunSpec = { metrics: [{ name: 'job', provider: { job: {} } }, m({ name: 'q' })] };
    let s = pass(spec, startRun(), 0, [
      { name: 'job', measurement: { phase: 'Running', startedAt: 0, resumeAt: 0 } },
      { name: 'q', measurement: { phase: 'Successful', startedAt: 0, finishedAt: 0 } },
    ]);
    expect(s.phase).toBe('Running');
    s = pass(spec, s, 10, [{ name: 'job', measurement: { phase: 'Failed', startedAt: 0, finishedAt: 10 } }]);
    expect(s.phase).toBe('Failed');
    expect(s.metricResults.find((r) => r.name === 'job')).toMatchObject({ count: 1, failed: 1, measurements: [{ phase: 'Failed' }] });
  });
});

describe('Go durations and Prometheus answers as Argo reads them', () => {
  it.each<[string, number | string]>([
    ['5m', 300_000], ['1h30m', 5_400_000], ['300ms', 300], ['1.5s', 1500], ['0', 0], ['-1s', -1000], ['.5s', 500], ['1us', 0.001],
    ['5', 'time: missing unit in duration "5"'], ['1h-1m', 'time: unknown unit "h-" in duration "1h-1m"'], ['1ss', 'time: unknown unit "ss" in duration "1ss"'], ['1..2s', 'time: missing unit in duration "1..2s"'], ['', 'time: invalid duration ""'], ['1d', 'time: unknown unit "d" in duration "1d"'], ['s', 'time: invalid duration "s"'],
  ])('%s', (text, want) => {
    const d = parseGoDuration(text);
    expect(typeof want === 'number' ? 'ms' in d && d.ms : 'error' in d && d.error).toBe(want);
  });

  it.each<[Parameters<typeof fromPrometheus>[0], unknown]>([
    [{ resultType: 'scalar', result: [1, '0.97'] }, { value: 0.97, text: '0.97' }],
    [{ resultType: 'scalar', result: [1, 'NaN'] }, { value: NaN, text: 'NaN' }],
    [{ resultType: 'vector', result: [] }, { value: [], text: '[]' }],
    [{ resultType: 'vector', result: [{ metric: {}, value: [1, '1'] }, { metric: {}, value: [1, '+Inf'] }] }, { value: [1, Infinity], text: '[1,+Inf]' }],
    [{ resultType: 'matrix', result: [{ metric: {}, values: [[1, '1'], [2, '2']] }, { metric: {}, values: [[1, '3']] }] }, { value: [1, 2, 3], text: '[1,2,3]' }],
    [{ resultType: 'string', result: [1, 'x'] }, { error: 'Prometheus metric type not supported' }],
  ])('%j', (data, want) => {
    expect(fromPrometheus(data)).toEqual(want);
  });

  it.each<[number, string]>([[1e21, '1000000000000000000000'], [1e-7, '0.0000001'], [1.5e-10, '0.00000000015'], [123.456, '123.456'], [-0, '-0'], [2.5e25, '25000000000000000000000000']])('%d prints as Go prints it', (f, text) => {
    expect(goFloat(f)).toBe(text);
  });
});

describe('Argo reads a rule and a number as Go does', () => {
  it.each<[string, string, boolean | undefined]>([
    ['m1', 'm1', true],
    ['M1', 'm1', false],
    ['(?i)M1', 'm1', true],
    ['\\Am1\\z', 'm1', true],
    ['\\Am\\z', 'm1', false],
    ['m.*', 'm12', true],
    ['a(?=b)', 'ab', undefined],
    ['(a)\\1', 'aa', undefined],
    ['(?U)m', 'm', undefined],
  ])('%s against %s', (pattern, name, want) => {
    const re = goRegExp(pattern);
    expect(re === undefined ? undefined : re.test(name)).toBe(want);
  });

  it.each<[string | number, number, number]>([
    ['3', 3, 3], ['+3', 3, 3], [' 3', 0, 0], ['3.0', 0, 0], ['0x10', 0, 0],
    ['99999999999999999999', 9223372036854775807, -1], ['-99999999999999999999', -9223372036854775808, 0], ['4294967297', 4294967297, 1],
  ])('IntOrString %j is %d, and %d as the controller compares it', (v, int, i32) => {
    expect(intValue(v)).toBe(int);
    expect(int32Value(v)).toBe(i32);
  });
});
