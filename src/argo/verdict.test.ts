import { runVerdict, summary } from './verdict.js';
import type { ArgoMetricResult, ArgoPhase, ArgoRunStatus } from './types.js';

const result = (name: string, phase: ArgoPhase, over: Partial<ArgoMetricResult> = {}): ArgoMetricResult => ({ name, phase, dryRun: false, count: 3, successful: 2, failed: 1, inconclusive: 0, error: 0, consecutiveError: 0, consecutiveSuccess: 1, measurements: [{ phase: 'Successful', value: '[0.97]', startedAt: 0, finishedAt: 0 }], ...over });
const run = (phase: ArgoPhase, message = '', results = [result('success-rate', phase)]): ArgoRunStatus => ({ phase, message, metricResults: results });

describe('what a run means for the step', () => {
  it.each<[ArgoPhase, string]>([
    ['Successful', 'pass'],
    ['Failed', 'fail'],
    ['Error', 'fail'],
    ['Inconclusive', 'inconclusive'],
  ])('%s → %s', (phase, want) => {
    const v = runVerdict(run(phase, phase === 'Successful' ? '' : `Metric "success-rate" assessed ${phase} due to x`));
    expect(v).toMatchObject({ result: want, value: phase });
    expect(v === 'running' ? '' : v.detail).toContain(`analysis ${phase}`);
  });

  it('a run still measuring has no verdict', () => {
    expect(runVerdict(run('Running'))).toBe('running');
    expect(runVerdict(run('Pending'))).toBe('running');
  });

  it('names every metric, dry-run ones marked, with its counts and last value', () => {
    expect(summary(run('Failed', '', [result('a', 'Failed'), result('b', 'Successful', { dryRun: true, measurements: [] })]))).toBe('a Failed ✔2 ✖1 ?0 ⚠0 last [0.97]; b (dry-run) Successful ✔2 ✖1 ?0 ⚠0');
  });
});
