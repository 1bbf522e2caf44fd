// The Jobs this process created, by UID, per StatefulSet: the only Jobs whose outcome a check believes.
// Whoever may create Jobs in a namespace can write a Job with the controller's owner, labels and
// annotations (RBAC cannot refuse them, and admission policies can be turned off), so a Job that looks
// like ours is no evidence that the controller made it; the UID the API server gave the controller's
// own create is. Kept in memory only: a Job a predecessor (a restarted process, another leader)
// started is waited for, then run again by this one (src/jobs/job-gate.ts), which costs one run per
// restart and never lets a copy answer a gate.

/** CreatedJobs records the UIDs of the Jobs this process created, per StatefulSet UID. */
export class CreatedJobs {
  private readonly byOwner = new Map<string, Map<string, number>>();
  private seq = 0;

  /** add records a Job this process just created. */
  add(owner: string, uid: string): void {
    let m = this.byOwner.get(owner);
    if (!m) this.byOwner.set(owner, (m = new Map()));
    m.set(uid, ++this.seq);
  }

  /** of is the UIDs recorded for a StatefulSet. */
  of(owner: string): ReadonlySet<string> {
    return new Set(this.byOwner.get(owner)?.keys() ?? []);
  }

  /** mark is taken before a list is read: keep() then forgets only what was recorded before it. */
  mark(): number {
    return this.seq;
  }

  /**
   * keep forgets the StatefulSet's Jobs that a list read after `mark` no longer holds (deleted, their
   * TTL passed), so the record stays as small as the Jobs that exist. A Job recorded after the mark (a
   * create racing the list) is kept: the list could not have seen it.
   */
  keep(owner: string, listed: readonly string[], mark: number): void {
    const m = this.byOwner.get(owner);
    if (!m) return;
    const seen = new Set(listed);
    for (const [uid, at] of m) if (at <= mark && !seen.has(uid)) m.delete(uid);
    if (m.size === 0) this.byOwner.delete(owner);
  }
}
