// The safety checker's record of checkpoints (test/support/safety-checker.ts): the VolumeSnapshots
// created (of which claim, when) and when each was cut (the snapshot controller's status write that first
// carries status.creationTime), read from the audit log. From it the checker judges, with no code of the
// planner, that a member a forward step released, ready or not, had each of its claims snapshotted in
// this attempt, and cut, before the partition write that released it (docs/checkpoints.md): the
// StatefulSet controller may delete the pod a moment after that write, so a cut between the two is
// already too late.

import type { Audited, Obj } from './safety-hooks.js';

/** Cut is one VolumeSnapshot: its claim, its creation and its cut. */
export interface Cut {
  name: string;
  namespace: string;
  claim: string;
  createdMs: number;
  cutMs?: number;
}

/** Checkpoints is what a StatefulSet's steps need at a moment: the claim templates to snapshot, since when. */
export interface Checkpoints {
  templates: string[];
  sinceMs: number;
}

/** SnapshotRecord collects the VolumeSnapshots of a log (read ahead: a cut comes later than the step may look). */
export class SnapshotRecord {
  readonly cuts: Cut[] = [];

  /** read takes one successful audit event: a snapshot's creation, or a status write with its cut. */
  read(e: Audited): void {
    const r = e.objectRef ?? {};
    const body = e.requestObject as Obj | undefined;
    if (r.resource !== 'volumesnapshots' || !body) return;
    const at = Date.parse(e.stageTimestamp);
    if (!r.subresource && e.verb === 'create') {
      const claim = body.spec?.source?.persistentVolumeClaimName;
      if (typeof claim === 'string') this.cuts.push({ name: body.metadata?.name ?? r.name ?? '', namespace: r.namespace ?? '', claim, createdMs: at });
      return;
    }
    if (r.subresource === 'status' && body.status?.creationTime) {
      const cut = this.cuts.filter((c) => c.name === r.name && c.namespace === r.namespace && c.createdMs <= at).at(-1);
      if (cut && cut.cutMs === undefined) cut.cutMs = at;
    }
  }

  /**
   * firstCreated: when the first snapshot of these claims was created after `sinceMs` and by `T`
   * (undefined: none). A checkpoint is the last prepare run of a step: the gates are judged up to it.
   */
  firstCreated(namespace: string, claims: readonly string[], sinceMs: number, T: number): number | undefined {
    const at = this.cuts.filter((c) => c.namespace === namespace && claims.includes(c.claim) && c.createdMs > sinceMs && c.createdMs <= T).map((c) => c.createdMs);
    return at.length > 0 ? Math.min(...at) : undefined;
  }

  /** uncut: the first claim that has no snapshot created after `sinceMs` and cut by `T` (the partition write); undefined when each has one. */
  uncut(namespace: string, claims: readonly string[], sinceMs: number, T: number): string | undefined {
    return claims.find((claim) => !this.cuts.some((c) => c.namespace === namespace && c.claim === claim && c.createdMs > sinceMs && c.cutMs !== undefined && c.cutMs <= T));
  }
}
