// The plugin's actions on a rollout (pause, resume, retry, promote, abort): one code path for the
// command line and the dashboard's buttons, so a button does exactly what the command does.
import { PatchStrategy, setHeaderOptions, type AppsV1Api } from '@kubernetes/client-node';
import { annotationPatch, rolloutPatch } from './commands.js';

/** Verb is an action on one StatefulSet's rollout. */
export type Verb = 'pause' | 'resume' | 'retry' | 'promote' | 'abort';

export const VERBS: readonly Verb[] = ['pause', 'resume', 'retry', 'promote', 'abort'];

const DONE: Record<Verb, string> = { pause: 'paused', resume: 'resumed', retry: 'checks restarted', promote: 'promoted', abort: 'rollback requested' };

/**
 * runAction applies a verb as the user (their kubeconfig): a merge patch of the StatefulSet's
 * annotations, which the webhook admits or denies like any edit. Returns what the command prints;
 * throws what went wrong (rolloutPatch's refusal, or the API server's error as it came).
 */
export async function runAction(apps: AppsV1Api, namespace: string, name: string, verb: Verb): Promise<string> {
  let body: Record<string, unknown>;
  if (verb === 'promote' || verb === 'abort' || verb === 'retry') {
    const s = await apps.readNamespacedStatefulSet({ name, namespace });
    body = rolloutPatch(verb, { name, annotations: s.metadata?.annotations ?? {}, updateRevision: s.status?.updateRevision, currentRevision: s.status?.currentRevision });
  } else body = annotationPatch(verb);
  await apps.patchNamespacedStatefulSet({ name, namespace, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  return `statefulset.apps/${name} ${DONE[verb]}`;
}
