// damaged-release: a release whose start damages its member's data, as a bad migration would. The new
// release (the new release line) runs a data migration in an init container before etcd starts, and the
// migration leaves the member's database unreadable (manifest.ts, `migration`): the member crash-loops.
// The claims are on the project's CSI driver (hack/csi.sh up), so volume snapshots can be cut.
//   ours                opted in with the etcd gate and a RolloutGate holding a checkpoint with
//                       `restore: on-rollback`: the rollback gives the damaged member its data of before
//                       (whether etcd takes the member back is what the run shows: docs/etcd.md)
//   ours-no-checkpoint  the same gate, no checkpoint: the rollback puts the old template back, not the data
//   plain               the StatefulSet controller alone (RollingUpdate)
// After the apply the scenario looks at the members every 2 s until the rollout settles (nothing seen
// changes for QUIET_MS) or BOUND_MS runs out, and judges which members are whole again with no person
// acting (health.ts): healthy_at_end and healthy_after_s on the RESULT line.
import { CLIENT_PORT, METRICS_PORT, optedIn, type Release } from './manifest.js';
import { failureOf, hasLeaderOf, healthFields, healthy, Settling, type Probe, type Settled } from './health.js';
import type { Member } from './observer.js';
import { good, type Outcome, type Stage } from './scenarios.js';

/**
 * QUIET_MS: the rollout is settled once nothing seen changed for this long: longer than the layout's
 * progress deadline (120 s), so a rollout waiting for a member that is never ready is not taken for
 * settled before its deadline rolls it back.
 */
const QUIET_MS = 150_000;
/** BOUND_MS: the judgement is made by then whatever still changes (a rollback with a restore included). */
const BOUND_MS = 15 * 60_000;
const LOOK_MS = 2000;
const PROBE_MS = 2000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** damaging is the damaging release: the new release line, with the broken migration in the environment's busybox image. */
export function damaging(stage: Stage): Release {
  const migrationImage = stage.ctx.cluster.env.IMAGE_BUSYBOX ?? '';
  if (!migrationImage) throw new Error('the environment names no busybox image (IMAGE_BUSYBOX in .e2e/env): the migration needs a shell');
  return { kind: 'damaging', image: stage.ctx.images.to, migrationImage };
}

/** probe looks at one member: its etcd_server_has_leader and a linearizable read through it, each within PROBE_MS. */
async function probe(name: string, m: Member | undefined): Promise<Probe> {
  if (!m?.ip || m.deleting) return { name, served: false };
  const [metrics, served] = await Promise.all([
    fetch(`http://${m.ip}:${METRICS_PORT}/metrics`, { signal: AbortSignal.timeout(PROBE_MS) }).then((r) => (r.ok ? r.text() : '')).catch(() => ''),
    // A range is linearizable unless asked otherwise: it needs the member to reach a leader.
    fetch(`http://${m.ip}:${CLIENT_PORT}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from('/health').toString('base64') }), headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(PROBE_MS) }).then((r) => r.ok).catch(() => false),
  ]);
  const hasLeader = hasLeaderOf(metrics);
  return { name, ...(hasLeader !== undefined ? { hasLeader } : {}), served };
}

/** damagedRelease applies the damaging release and judges, once the rollout settled, which members are whole. */
export async function damagedRelease(stage: Stage): Promise<Outcome> {
  const { ctx } = stage;
  const ns = stage.layout.namespace;
  const release = damaging(stage);
  await stage.begin(good(ctx, 'from'));
  const t0 = Date.now();
  await stage.roll(release);
  const settling = new Settling(QUIET_MS, BOUND_MS);
  let judged: Settled | undefined;
  let said = stage.names.join(',');
  while (!judged) {
    const probes = await Promise.all(stage.names.map((n) => probe(n, stage.observer.seen.get(n))));
    const h = healthy(probes);
    if (h.join(',') !== said) {
      said = h.join(',');
      ctx.say(`healthy (follow a leader and serve): ${h.join(', ') || 'none'} (${h.length}/${stage.names.length})`);
    }
    // What else may still change: the members' pods (a replaced pod has another uid) and, with ours, the
    // rollout's phase and partition. A crash-looping container's restarts are not a change.
    const pods = stage.names.map((n) => {
      const m = stage.observer.seen.get(n);
      return m ? `${n}:${m.uid ?? ''}:${m.revision ?? ''}:${m.deleting}` : `${n}:-`;
    });
    const statuses = optedIn(ctx.system) ? (await stage.statuses()).map((s) => `${s?.phase ?? '-'}:${s?.partition ?? '-'}`) : [];
    judged = settling.look(Date.now() - t0, h, JSON.stringify([pods, statuses]));
    if (!judged) await sleep(LOOK_MS);
  }
  const settledS = Math.round((Date.now() - t0) / 1000);
  ctx.say(judged.settled ? `settled ${settledS} s after the apply: ${healthFields(judged, stage.names.length)}` : `not settled within ${BOUND_MS / 60_000} min; judged as it stands: ${healthFields(judged, stage.names.length)}`);
  // Why the others are not whole: the last panic or fatal of their etcd container.
  const unhealthy = stage.names.filter((n) => !judged.healthy.includes(n));
  for (const n of unhealthy) {
    const logs = await ctx.cluster.kubectl(['logs', '-n', ns, n, '-c', 'etcd', '--previous', '--tail', '300']).catch(() => '');
    ctx.say(`${n}: ${failureOf(logs) ?? 'no panic or fatal in its previous container\'s log'} (restarts ${stage.observer.seen.get(n)?.restarts ?? '?'})`);
  }
  const details: Record<string, string | number> = {
    max_on_new: stage.observer.maxOnWatched,
    settled: judged.settled ? 'yes' : 'no',
    settled_s: settledS,
    unhealthy: unhealthy.join(',') || 'none',
  };
  if (optedIn(ctx.system)) {
    details.phase = (await stage.statuses()).map((s) => s?.phase ?? '-').join(',');
    const events = await ctx.cluster.getJson<{ items: { reason?: string; count?: number }[] }>(['events', '-n', ns]).catch(() => ({ items: [] }));
    const count = (reason: string) => events.items.filter((e) => e.reason === reason).reduce((a, e) => a + (e.count ?? 1), 0);
    details.checkpoints = count('CheckpointTaken');
    details.restores_started = count('RestoreStarted');
    details.restores_completed = count('RestoreCompleted');
    details.restores_skipped = count('RestoreSkipped');
    // The members whose claim the rollback made again from a snapshot (the restore's own record).
    const claims = await ctx.cluster.getJson<{ items: { metadata: { name: string }; spec: { dataSource?: { kind?: string } } }[] }>(['persistentvolumeclaims', '-n', ns]).catch(() => ({ items: [] }));
    details.restored = claims.items.filter((c) => c.spec.dataSource?.kind === 'VolumeSnapshot').map((c) => c.metadata.name.replace(/^data-/, '')).join(',') || 'none';
  }
  const out = await stage.finish(release, 5000, details);
  return { ...out, healthy: judged.healthy.length, result: [healthFields(judged, stage.names.length)] };
}
