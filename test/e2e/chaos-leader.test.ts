// Chaos: two controller replicas with leader election; SIGKILL the leader mid-rollout again and again,
// start a fresh replica each time, and prove from the API server's audit log that every partition step
// was made by the replica that held the Lease at that moment (no two replicas act in one term), that
// every step was gated (the independent safety checker), and how long each takeover took.
// Short in `npm run test:e2e` (3 kills); `npm run test:chaos` makes it 10 (PHASED_ROLLOUT_CHAOS_LEADER_KILLS).
import { randomBytes } from 'node:crypto';
import { jest } from '@jest/globals';
import { eventually } from '../support/eventually.js';
import { shipped, freePort, start, type Child } from '../support/process.js';
import type { AuditEvent } from '../support/safety-checker.js';
import { chaosSeed, random, reportChaos, violationsText } from './chaos.js';
import { Rollout } from './rollout.js';
import { auditLog, auditMarkOf, createNamespace, deleteNamespace, env, harnessProcess, safetyReport, waitHttp } from './cluster.js';

const KILLS = Number(process.env.PHASED_ROLLOUT_CHAOS_LEADER_KILLS ?? 3);
const LEASE_NS = 'phased-rollout-system';
jest.setTimeout(120_000 + KILLS * 25_000);

interface Replica {
  child: Child;
  metrics: number;
}

const ms = (t: string | undefined) => Date.parse(t ?? '');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? NaN;

/** identityOf reads a replica's Lease identity from its `informers synced` log line. */
function identityOf(r: Replica): string | undefined {
  return r.child.lines().find((l) => l.msg === 'informers synced')?.identity as string | undefined;
}

/** Term is one holder of the Lease, from the write that made it the holder. */
interface LeaseWrite {
  at: number;
  holder: string | null;
}

/** leaseWrites are the successful writes of one Lease, in order, with the holder each one set. */
function leaseWrites(lease: string): LeaseWrite[] {
  // The Lease lives in the controller's namespace; only its writes since this test's namespace was made count.
  return auditLog(LEASE_NS, auditMarkOf(ns))
    .filter((a) => a.objectRef?.resource === 'leases' && a.objectRef.name === lease && ['create', 'update', 'patch'].includes(a.verb) && (a.responseStatus?.code ?? 500) < 300 && a.stage === 'ResponseComplete')
    .map((a) => ({ at: ms(a.stageTimestamp), holder: ((a.requestObject as { spec?: { holderIdentity?: string | null } } | undefined)?.spec?.holderIdentity ?? null) }))
    .sort((a, b) => a.at - b.at);
}

/** partitionWrites are the successful StatefulSet patches of the controller in a namespace. */
function partitionWrites(ns: string): AuditEvent[] {
  return auditLog(ns).filter(
    (a) => a.objectRef?.resource === 'statefulsets' && !a.objectRef.subresource && a.verb === 'patch' && a.stage === 'ResponseComplete' && (a.responseStatus?.code ?? 0) < 300 && JSON.stringify(a.requestObject ?? '').includes('/spec/updateStrategy/rollingUpdate/partition'),
  );
}

let ns: string;
const replicas: Replica[] = [];
beforeAll(async () => {
  ns = await createNamespace('e2e-chaos-leader');
  await harnessProcess('stop', 'controller');
});
afterAll(async () => {
  for (const r of replicas) if (r.child.proc.exitCode === null && r.child.proc.signalCode === null) r.child.proc.kill('SIGTERM');
  await Promise.all(replicas.map((r) => r.child.exited));
  await harnessProcess('start', 'controller');
  await waitHttp(`${env().CONTROLLER_METRICS_URL}/readyz`);
  await deleteNamespace(ns);
});

describe('chaos: the leader killed mid-rollout, two replicas', () => {
  it(`survives ${KILLS} leader kills: each step by the Lease holder of its term, each gated, takeovers timed`, async () => {
    const e = env();
    const seed = chaosSeed();
    const rnd = random(seed);
    const lease = `chaos-leader-${randomBytes(3).toString('hex')}`;
    const spawn = async () => {
      const metrics = await freePort();
      const child = start(shipped('controller'), [
        '--kubeconfig', e.CONTROLLER_KUBECONFIG, '--prometheus-url', e.PROMETHEUS_URL, '--metrics-port', String(metrics), '--bind-address', '127.0.0.1', '--namespace', ns,
        '--leader-elect', '--leader-election-name', lease,
        '--leader-election-lease-duration', '4s', '--leader-election-renew-deadline', '3s', '--leader-election-renew-period', '1s',
      ]);
      const r = { child, metrics };
      replicas.push(r);
      await waitHttp(`http://127.0.0.1:${metrics}/readyz`, 30_000);
      return r;
    };
    const alive = () => replicas.filter((r) => r.child.proc.exitCode === null && r.child.proc.signalCode === null);
    const leading = async (r: Replica) => /^phased_rollout_leader 1$/m.test(await (await fetch(`http://127.0.0.1:${r.metrics}/metrics`)).text().catch(() => ''));
    const leader = async () => {
      for (const r of alive()) if (await leading(r).catch(() => false)) return r;
      return undefined;
    };
    await spawn();
    await spawn();
    await eventually(async () => expect(await leader()).toBeDefined(), 20_000, 200);

    // Two pods per kill and some: a new leader may step again before the test finds it, so a rollout of
    // KILLS + 3 pods could end before the last kill.
    const sts = new Rollout(ns, 'leader', 2 * KILLS + 2);
    await sts.create();
    const rev = await sts.roll('registry.example/app:2');
    const kills: { at: number; identity: string }[] = [];
    for (let i = 0; i < KILLS; i++) {
      // A kill right after a step of the current leader, or a little later (during its next checks).
      const from = await sts.partition();
      if (!(await sts.nextStep(from, 40_000))) throw new Error(`no partition step from ${from} within 40 s (kill ${i})`);
      await new Promise((r) => setTimeout(r, rnd() * 1500));
      const l = await eventually(async () => {
        const found = await leader();
        expect(found).toBeDefined();
        return found!;
      }, 20_000, 100);
      const identity = identityOf(l);
      if (!identity) throw new Error('the leader logged no identity');
      kills.push({ at: Date.now(), identity });
      l.child.proc.kill('SIGKILL');
      await l.child.exited;
      await spawn(); // two replicas again: the survivor takes over, the newcomer stands by
    }
    await sts.completed(rev, 120_000);

    // Terms from the audit log: each successful Lease write sets the holder until the next one.
    const writes = leaseWrites(lease);
    const holderAt = (t: number) => [...writes].reverse().find((w) => w.at <= t)?.holder ?? null;
    const outOfTerm: string[] = [];
    const steps = partitionWrites(ns);
    for (const p of steps) {
      const holder = holderAt(ms(p.requestReceivedTimestamp ?? p.stageTimestamp));
      if (!holder || !(p.userAgent ?? '').includes(`(${holder})`)) outOfTerm.push(`${p.stageTimestamp} ${p.userAgent} wrote while the Lease was held by ${holder ?? 'nobody'}: ${JSON.stringify(p.requestObject)}`);
    }
    const takeovers = kills.map((k) => {
      const next = writes.find((w) => w.at > k.at && w.holder !== null && w.holder !== k.identity);
      return next ? next.at - k.at : NaN;
    });
    const agents = new Set(steps.map((p) => p.userAgent));
    const safety = await safetyReport(ns, 'leader');
    const ok = outOfTerm.length === 0 && safety.violations.length === 0 && takeovers.every(Number.isFinite);
    reportChaos({
      scenario: 'leader kills (2 replicas)',
      tried: `${KILLS} SIGKILLs of the leader during a ${sts.replicas}-pod rollout (lease 4 s, renew deadline 3 s), seed ${seed}`,
      survived: `Completed; ${steps.length} partition writes by ${agents.size} replicas, ${outOfTerm.length} outside the writer's term; ${safety.gatedSteps} gated steps, ${violationsText(safety.violations)}; takeover median ${(median(takeovers) / 1000).toFixed(1)} s, max ${(Math.max(...takeovers) / 1000).toFixed(1)} s`,
      ok,
    });
    expect(outOfTerm).toEqual([]);
    expect(safety.violations.map((v) => `${v.at} ${v.statefulset}: ${v.why}\n  ${v.request}`)).toEqual([]);
    expect(safety.gatedSteps).toBe(sts.replicas);
    // Every kill was followed by a takeover by another replica, within two lease durations.
    expect(takeovers.filter((t) => !(t < 8000))).toEqual([]);
    // The writes really came from several replicas, so the term check had something to tell apart.
    expect(agents.size).toBeGreaterThan(1);
  });
});
