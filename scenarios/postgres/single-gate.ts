// The single member's recipe as the bad-migration scenario uses it: examples/postgres-single/rolloutgate.yaml
// (a checkpoint of the claim, restored on rollback, and a Job that checks the schema), read from the
// repository as a user would apply it, with the scenario's namespace, image, snapshot class and table.
// `ours-no-checkpoint` applies the same policy without its checkpoint.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadYaml } from '@kubernetes/client-node';
import { onRealNode, ROOT, timingOf } from './gate.js';
import { CSI_CLASS } from './single.js';
import { TABLE } from './writer.js';

export const SINGLE_POLICY = 'postgres-single';

type Spec = { checkpoint?: Record<string, unknown>; jobs: { name: string; template: any }[]; [k: string]: unknown };

/** singleRecipe is the example policy as written. */
export function singleRecipe(): { metadata: { name: string; namespace?: string }; spec: Spec } {
  return loadYaml(readFileSync(resolve(ROOT, 'examples', 'postgres-single', 'rolloutgate.yaml'), 'utf8'));
}

/**
 * singlePolicy is the recipe for the scenario: its namespace, the CSI driver's snapshot class (or no
 * checkpoint), the writer's table as the one to check, and its image in the Job, on the real node.
 */
export function singlePolicy(namespace: string, image: string, checkpoint: boolean): unknown {
  const p = singleRecipe();
  p.metadata.namespace = namespace;
  if (!checkpoint) delete p.spec.checkpoint;
  else if (p.spec.checkpoint) p.spec.checkpoint.volumeSnapshotClassName = CSI_CLASS;
  for (const j of p.spec.jobs) {
    const pod = j.template.spec.template.spec;
    onRealNode(pod, image);
    for (const c of pod.containers) for (const e of c.env ?? []) if (e.name === 'TABLES') e.value = `public.${TABLE}`;
  }
  return p;
}

/** singleAnnotations opt the StatefulSet in with the recipe (a rollback on failure). */
export function singleAnnotations(): Record<string, string> {
  return { 'phased-rollout.io/enabled': 'true', 'phased-rollout.io/gates': SINGLE_POLICY, 'phased-rollout.io/on-failure': 'rollback' };
}

/** singleTiming is the recipe's timing as annotation keys (the safety checker judges the steps by it). */
export function singleTiming(): Record<string, string> {
  return timingOf(singleRecipe().spec);
}
