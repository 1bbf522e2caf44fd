// What an Argo run means for a step, by Argo's rules for a Rollout's analysis: Successful lets the
// step go; Failed and Error abort (the failure path: on-failure, rollback), since Argo aborts a
// Rollout on either; Inconclusive holds for a person (our promotable hold, as Argo pauses); a run
// still measuring has no verdict yet. One step is one run: the run is made when the step's checks
// begin and judged to its end.

import type { Verdict } from '../rollout/types.js';
import { completed, type ArgoRunStatus } from './types.js';

/** runVerdict gives the step's verdict of a finished run, or `running` while it still measures. */
export function runVerdict(run: ArgoRunStatus): Verdict | 'running' {
  if (!completed(run.phase)) return 'running';
  const detail = `analysis ${run.phase}${run.message ? `: ${clip(run.message, 512)}` : ''}; ${summary(run)}`;
  switch (run.phase) {
    case 'Successful':
      return { result: 'pass', detail, value: run.phase };
    case 'Inconclusive':
      return { result: 'inconclusive', detail, value: run.phase, decisive: true };
    default:
      // Failed and Error both abort, as in Argo: an analysis that errs is not a Prometheus outage to wait out.
      return { result: 'fail', detail, value: run.phase, decisive: true };
  }
}

/** summary: each metric's phase and counts, as `kubectl argo rollouts get` shows them. */
export function summary(run: ArgoRunStatus): string {
  // Bounded: a web metric's value may be a whole answer, and the summary goes into the status annotation.
  const text = run.metricResults
    .map((r) => `${r.name}${r.dryRun ? ' (dry-run)' : ''} ${r.phase} ✔${r.successful} ✖${r.failed} ?${r.inconclusive} ⚠${r.error}${r.measurements.length > 0 ? ` last ${clip(r.measurements[r.measurements.length - 1]?.value ?? r.measurements[r.measurements.length - 1]?.phase ?? '', 64)}` : ''}`)
    .join('; ');
  return clip(text, 1024);
}

function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}
