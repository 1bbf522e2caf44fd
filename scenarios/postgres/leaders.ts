// Who leads a Patroni cluster, and how the primary role moved: from the leader Patroni records in its
// lock (the Endpoints of the scope's name) and the members' pods at that moment. Pure, for the tables.
//
// A change of leader is a switchover when the old leader's pod was still there, Ready and not being
// deleted when the lock moved: the old primary handed the role over and went on running (Patroni
// restarts PostgreSQL inside the pod as a replica). It is a failover when the old leader's pod was
// being deleted, gone, replaced or not Ready: the primary was lost and another took over.

/** PodSeen is what the classification needs of one member's pod. */
export interface PodSeen {
  name: string;
  uid: string;
  ready: boolean;
  deleting: boolean;
}

export type LeaderChange = { from: string; to: string; kind: 'switchover' | 'failover' };

/**
 * leaderChange says how the lock moved from `from` to `to` (an empty name: no leader). Undefined when it
 * did not move away from a leader: the same leader, or a leader found where there was none (counted when
 * it was lost). `fromUid` is the old leader's pod as it was while it led.
 */
export function leaderChange(from: string, fromUid: string, to: string, pods: ReadonlyMap<string, PodSeen>): LeaderChange | undefined {
  if (!from || from === to) return undefined;
  const p = pods.get(from);
  const lost = !p || p.deleting || !p.ready || (fromUid !== '' && p.uid !== fromUid);
  return { from, to, kind: lost ? 'failover' : 'switchover' };
}

/** Tally counts the changes of a run. */
export function tally(changes: readonly LeaderChange[]): { failovers: number; switchovers: number } {
  return { failovers: changes.filter((c) => c.kind === 'failover').length, switchovers: changes.filter((c) => c.kind === 'switchover').length };
}
