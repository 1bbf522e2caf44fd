// phased-rollout.io/analysis: the StatefulSet's own reference to Argo Rollouts' AnalysisTemplates, as a
// gate policy's spec.analysis names them (src/argo/reference.ts). Either template names, comma-separated
// (`success-rate, cluster/platform-slo`: `cluster/` names a ClusterAnalysisTemplate), or the JSON of a
// policy's spec.analysis when args are given (`{"templates": [...], "args": [...]}`).

import { parseAnalysisRef, type AnalysisRef } from '../argo/reference.js';
import { KEYS } from './keys.js';
import type { AnalysisGate, Problem } from './types.js';

const NAMES = 'comma-separated AnalysisTemplate names (cluster/<name> for a ClusterAnalysisTemplate), e.g. "success-rate, cluster/slo", or the JSON of a gate policy\'s spec.analysis: {"templates": [{"templateName": "success-rate"}], "args": [{"name": "service-name", "value": "db"}]}';

/** parseAnalysis reads the annotation into one gate named `analysis`, or reports the problem. */
export function parseAnalysis(a: Record<string, string | undefined>, problems: Problem[]): AnalysisGate | undefined {
  const v = a[KEYS.analysis];
  if (v === undefined) return undefined;
  const text = v.trim();
  let ref: AnalysisRef | string[];
  if (text.startsWith('{')) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      problems.push({ key: KEYS.analysis, value: v, allowed: `${NAMES} (not JSON: ${(e as Error).message})` });
      return undefined;
    }
    ref = parseAnalysisRef(json, KEYS.analysis);
  } else {
    const names = text.split(',').map((x) => x.trim()).filter(Boolean);
    ref = parseAnalysisRef({ templates: names.map((n) => (n.startsWith('cluster/') ? { templateName: n.slice('cluster/'.length), clusterScope: true } : { templateName: n })) }, KEYS.analysis);
  }
  if (Array.isArray(ref)) {
    problems.push({ key: KEYS.analysis, value: v, allowed: `${NAMES} (${ref.join('; ')})` });
    return undefined;
  }
  return { name: 'analysis', ref };
}
