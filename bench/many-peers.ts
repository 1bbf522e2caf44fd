// bench:many --peers: the peer systems idle on the same S StatefulSets x R pods as ours, one at a time,
// so the memory table compares like with like. Each peer gets the objects it needs over the existing
// StatefulSets (sts-phased: a PhasedRollout per StatefulSet; rollout-operator: the rollout-group label,
// in the namespace it runs for), its own permissions, and nothing to do: every pod is on the update
// revision. Our controller is stopped meanwhile (it owns the partitions; the peers only read them here).
import { type ChildProcess } from 'node:child_process';
import { sleep } from './e2e-env.js';
import { kubectl, ourController, peerDied, permit, phasedRollout, preparePeers, requirePeerSnapshots, startPeer, stopPeer } from './peer-systems.js';
import { rssMb } from './proc.js';

/** PEERS_IDLE are the systems --peers accepts. */
export const PEERS_IDLE = ['sts-phased', 'ro-5s'];

/** applyChunks applies JSON objects 50 to a kubectl call. */
function applyChunks(items: unknown[]): void {
  for (let i = 0; i < items.length; i += 50) kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: items.slice(i, i + 50) }));
}

/**
 * peersIdle measures each peer in `systems`, idle over StatefulSets s0..s(S-1) of `ns`: its highest RSS
 * over `idleS` seconds from `settleS` after its start (the peers have no readiness this benchmark can
 * read the same way for both; settleS covers their first list and first pass). Returns MB per system.
 */
export async function peersIdle(ns: string, S: number, systems: string[], gate: string, idleS: number, settleS = 20): Promise<Record<string, number>> {
  const bad = systems.filter((s) => !PEERS_IDLE.includes(s));
  if (bad.length) throw new Error(`--peers: unknown ${bad.join(', ')} (one of ${PEERS_IDLE.join(', ')})`);
  const { peers } = preparePeers(requirePeerSnapshots(undefined));
  const names = Array.from({ length: S }, (_, i) => `s${i}`);
  const out: Record<string, number> = {};
  await ourController('stop');
  try {
    for (const system of systems) {
      permit(system, ns, peers);
      if (system === 'sts-phased') applyChunks(names.map((n) => JSON.parse(phasedRollout(ns, n, gate))));
      else kubectl(['label', 'statefulsets', '--all', '-n', ns, 'rollout-group=many', '--overwrite']);
      let child: ChildProcess | undefined;
      try {
        child = await startPeer(system, ns, peers);
        await sleep(settleS * 1000);
        let peak = 0;
        for (let t = 0; t < idleS; t++) {
          await sleep(1000);
          const died = peerDied();
          if (died) throw new Error(died);
          peak = Math.max(peak, rssMb(child?.pid));
        }
        out[system] = peak;
      } finally {
        await stopPeer(child);
        if (system === 'sts-phased') kubectl(['delete', 'phasedrollouts.sts.plus', '--all', '-n', ns, '--wait=false']);
        else kubectl(['label', 'statefulsets', '--all', '-n', ns, 'rollout-group-']);
      }
    }
  } finally {
    await ourController('start');
  }
  return out;
}
