// The pod template a ControllerRevision holds, for an automatic rollback. The StatefulSet controller
// stores each revision as a strategic-merge patch `{"spec":{"template":{..., "$patch":"replace"}}}`;
// putting that template back on the StatefulSet makes the controller name the old revision again.
import type { V1ControllerRevision, V1PodTemplateSpec, V1StatefulSet } from '@kubernetes/client-node';

/** RevisionError says why a ControllerRevision cannot be restored. */
export class RevisionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RevisionError';
  }
}

/** templateOf returns the pod template stored in a StatefulSet's ControllerRevision, or throws RevisionError. */
export function templateOf(cr: V1ControllerRevision, sts: V1StatefulSet): V1PodTemplateSpec {
  const name = cr.metadata?.name ?? '?';
  // Only a revision of this very StatefulSet (same uid) may be restored: a name alone could be reused.
  const owned = (cr.metadata?.ownerReferences ?? []).some((o) => o.kind === 'StatefulSet' && o.uid === sts.metadata?.uid);
  if (!owned) throw new RevisionError(`ControllerRevision ${name} does not belong to StatefulSet ${sts.metadata?.name}`);
  const template = (cr.data as { spec?: { template?: Record<string, unknown> } } | undefined)?.spec?.template;
  if (!template || typeof template !== 'object' || Array.isArray(template)) throw new RevisionError(`ControllerRevision ${name} holds no pod template`);
  const { $patch: _directive, ...rest } = template;
  return rest as V1PodTemplateSpec;
}
