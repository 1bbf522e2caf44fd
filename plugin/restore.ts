// `kubectl phased-rollout restore NAME --pod POD [--checkpoint SNAPSHOT]`: the I/O of a member's restore
// (src/checkpoints/restore.ts decides each step). It reads the StatefulSet, the member's pod and claims,
// the namespace's restore marks and the member's checkpoints; applies the next step; looks again, until
// the pod runs Ready on the restored claims. Killed at any point, the same command goes on from where the
// cluster stands: the mark keeps the claim from being made empty meanwhile (the chart's policy).
// It acts with the user's own rights (delete and create the member's claims, delete its pod, write the
// ConfigMap): the controller holds no right to delete a claim.
import { createInterface } from 'node:readline/promises';
import type { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { EventRecorder, type EventTarget } from '../src/k8s/events.js';
import { createLogger } from '../src/runtime/logger.js';
import { checkpointsOf, chooseCheckpoint, RESTORES_CONFIGMAP, restoreCost, repeatRefusal, restoreRefusal, restoreStep } from '../src/checkpoints/restore.js';
import { absent, apply, candidates, ordinalOf, viewOf } from '../src/checkpoints/restore-io.js';

export interface RestoreCommand {
  name: string;
  namespace: string;
  pod: string;
  checkpoint?: string;
  yes: boolean;
  timeoutMs: number;
  again?: boolean;
}

export interface RestoreClients {
  apps: AppsV1Api;
  core: CoreV1Api;
  objects: CustomObjectsApi;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * restore runs the command: chooses the checkpoint, says what it costs and asks (unless --yes), then steps
 * until done (exit 0), refused (1) or out of time (2: run it again to go on).
 */
export async function restore(c: RestoreClients, cmd: RestoreCommand, out: (line: string) => void, ask: (q: string) => Promise<boolean> = confirm): Promise<number> {
  const sts = await absent(c.apps.readNamespacedStatefulSet({ name: cmd.name, namespace: cmd.namespace }));
  if (!sts) return void out(`error: StatefulSet ${cmd.namespace}/${cmd.name} not found`), 1;
  if (ordinalOf(cmd.name, cmd.pod) === undefined) return void out(`error: ${cmd.pod} is not a pod of StatefulSet ${cmd.name} (${cmd.name}-<ordinal>)`), 1;
  const chosen = chooseCheckpoint(checkpointsOf(await candidates(c, cmd)), [], cmd.checkpoint);
  if ('problem' in chosen) return void out(`error: pod ${cmd.pod}: ${chosen.problem}`), 1;
  const fresh = randomBytes(4).toString('hex');
  const first = await viewOf(c, cmd, sts, chosen, fresh, { withPhase: true });
  const resuming = first.id !== fresh;
  const refused = restoreRefusal(first) ?? repeatRefusal({ ...first, resuming });
  if (refused) return void out(`refused: ${refused}`), 1;
  const what = chosen.snapshots.map((s) => `${s.claim} from ${s.name}`).join(', ');
  out(`${resuming ? 'going on with the restore of' : 'restoring'} pod ${cmd.pod} of ${cmd.namespace}/${cmd.name}: ${what} (cut before revision ${chosen.toRevision ?? '?'}, the pod comes back on ${chosen.revision ?? '?'})`);
  out(`cost: ${restoreCost(cmd.pod, chosen)}`);
  if (!cmd.yes && !resuming && !(await ask('restore? type yes: '))) return void out('not restored'), 1;
  const target: EventTarget = { namespace: cmd.namespace, name: cmd.name, uid: sts.metadata?.uid ?? '' };
  const events = new EventRecorder(c.core, createLogger('kubectl-phased-rollout', 'silent'), 'kubectl-phased-rollout');
  if (!resuming) await events.emit(target, 'Warning', 'RestoreStarted', `pod ${cmd.pod} restored from its checkpoint: ${what}; ${restoreCost(cmd.pod, chosen)}`);
  const until = Date.now() + cmd.timeoutMs;
  let said = '';
  for (;;) {
    const now = await absent(c.apps.readNamespacedStatefulSet({ name: cmd.name, namespace: cmd.namespace }));
    if (!now) return void out(`error: StatefulSet ${cmd.namespace}/${cmd.name} is gone; the mark stays (ConfigMap ${RESTORES_CONFIGMAP}) so no claim of the member is made empty`), 1;
    const step = restoreStep(await viewOf(c, cmd, now, chosen, first.id, { resuming: true, withPhase: true }));
    if (step.state === 'refused') return void out(`refused: ${step.reason}`), 1;
    if (step.detail !== said) out(step.detail);
    said = step.detail;
    await apply(c, cmd.namespace, step.actions);
    if (step.state === 'done') {
      await events.emit(target, 'Normal', 'RestoreCompleted', `pod ${cmd.pod} restored: ${step.detail}`);
      return 0;
    }
    if (Date.now() > until) return void out(`timed out: run the same command again to go on (the mark in ConfigMap ${RESTORES_CONFIGMAP} keeps the member's claims from being made empty meanwhile)`), 2;
    await sleep(step.state === 'acting' ? 200 : 1000);
  }
}

async function confirm(q: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(q)).trim() === 'yes';
  } finally {
    rl.close();
  }
}
