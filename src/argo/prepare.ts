// An analysis run made from a gate policy's reference, as Argo makes an AnalysisRun from a Rollout's
// analysis step: the templates the reference reaches (composition followed), flattened, the args merged
// and resolved, then substituted into each metric. What cannot run here is refused with a message that
// names the template, the metric and the field (src/argo/template.ts, refusal). Pure, in two parts
// around the Secrets the args name, which the shell reads between them.

import { argValues, secretRefs, type ArgFields } from './args.js';
import type { AnalysisRef } from './reference.js';
import { validateRun } from './run.js';
import { collect, flatten, mergeArgs, refusal, resolveMetricArgs, type ArgoArg, type ArgoTemplate, type FlatRun, type TemplateRef } from './template.js';
import type { ArgoMetric, ArgoRunSpec } from './types.js';

/** Planned: the flattened templates with their args merged, and the Secret keys those args name. */
export interface PlannedRun {
  flat: FlatRun;
  args: ArgoArg[];
  secrets: { name: string; key: string }[];
}

/** A metric of a run with the template it came from (for messages). */
export type RunMetric = ArgoMetric & { template: string };

/** planRun follows the reference's templates (looked up by the shell) and merges the args; refusals come first. */
export function planRun(ref: AnalysisRef, lookup: (r: TemplateRef) => ArgoTemplate | undefined): PlannedRun | { error: string } {
  const found = collect(ref.templates, lookup);
  if ('error' in found) return found;
  const flat = flatten(found.templates, found.clusterTemplates);
  if ('error' in flat) return flat;
  for (const m of flat.metrics) {
    const why = refusal(m);
    if (why) return { error: why };
  }
  const args = mergeArgs(ref.args, flat.args);
  if ('error' in args) return args;
  return { flat, args, secrets: secretRefs(args) };
}

/** finishRun resolves the args and substitutes them: the run's spec, checked as Argo checks a run's. */
export function finishRun(p: PlannedRun, fields: ArgFields, secrets: ReadonlyMap<string, string>): { spec: Omit<ArgoRunSpec, 'metrics'> & { metrics: RunMetric[] } } | { error: string } {
  const values = argValues(p.args, fields, secrets);
  if ('error' in values) return values;
  const metrics: RunMetric[] = [];
  for (const m of p.flat.metrics) {
    const r = resolveMetricArgs(m, values);
    if ('error' in r) return { error: `${m.template}, metric ${m.name}: ${r.error}` };
    metrics.push(r);
  }
  const spec = { metrics, dryRun: p.flat.dryRun, measurementRetention: p.flat.measurementRetention };
  const invalid = validateRun(spec);
  return invalid ? { error: `Analysis spec invalid: ${invalid}` } : { spec };
}
