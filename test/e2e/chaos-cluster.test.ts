// Chaos around the controller: the API server restarted mid-rollout, Prometheus flapping, the webhook
// down, and a revision whose pod never becomes ready. Each scenario ends with the independent safety
// checker and reports a row of the chaos table. Short in `npm run test:e2e`; `npm run test:chaos`
// repeats the API server restarts and the Prometheus flaps (PHASED_ROLLOUT_CHAOS_RESTARTS,
// PHASED_ROLLOUT_CHAOS_FLAPS). Every loop is bounded.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { ROOT } from '../support/process.js';
import { chaosSeed, random, reportChaos, violationsText } from './chaos.js';
import { fastGate, Rollout } from './rollout.js';
import { auditLog, createNamespace, deleteNamespace, env, getJson, harnessProcess, kubectl, kubectlOk, podRevisions, run, safetyReport, waitHttp } from './cluster.js';

const RESTARTS = Number(process.env.PHASED_ROLLOUT_CHAOS_RESTARTS ?? 1);
const FLAPS = Number(process.env.PHASED_ROLLOUT_CHAOS_FLAPS ?? 3);
jest.setTimeout(180_000 + (RESTARTS + FLAPS) * 20_000);

let ns: string;
beforeAll(async () => {
  ns = await createNamespace('e2e-chaos-cluster');
});
afterAll(async () => {
  await deleteNamespace(ns);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (t: string | undefined) => Date.parse(t ?? '');

/** metric reads one sample of the harness controller's metrics (0 when absent). */
async function metric(name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${env().CONTROLLER_METRICS_URL}/metrics`)).text();
  return Number(text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`))?.split(' ').pop() ?? 0);
}

/** stsEvents are the Events of one StatefulSet: reason, message, count. */
async function stsEvents(name: string): Promise<{ reason: string; message: string; count: number }[]> {
  const list = await getJson<{ items: { reason: string; message: string; count?: number; involvedObject: { kind: string; name: string } }[] }>(['events', '-n', ns]);
  return list.items.filter((e) => e.involvedObject.kind === 'StatefulSet' && e.involvedObject.name === name).map((e) => ({ reason: e.reason, message: e.message, count: e.count ?? 1 }));
}

/** lowerings are the audit log's successful partition lowerings of a StatefulSet, with when they were received. */
function lowerings(name: string): { at: number; body: string }[] {
  return auditLog(ns)
    .filter((a) => a.objectRef?.resource === 'statefulsets' && a.objectRef.name === name && !a.objectRef.subresource && a.verb === 'patch' && (a.responseStatus?.code ?? 0) < 300)
    .map((a) => ({ at: ms(a.requestReceivedTimestamp ?? a.stageTimestamp), body: JSON.stringify(a.requestObject ?? '') }))
    .filter((l) => {
      const ops = JSON.parse(l.body) as { op: string; value?: number }[];
      const from = ops.find?.((o) => o.op === 'test')?.value;
      const to = ops.find?.((o) => o.op === 'replace' || o.op === 'add')?.value;
      return typeof from === 'number' && typeof to === 'number' && to < from;
    });
}

describe('chaos: the API server restarted mid-rollout', () => {
  it(`survives ${RESTARTS} API server restart(s): informers recover, the rollout completes, Events are not repeated`, async () => {
    const sts = new Rollout(ns, 'apiserver', 2 + 2 * RESTARTS);
    await sts.create();
    const rev = await sts.roll('registry.example/app:2');
    const downFor: number[] = [];
    const t1 = Date.now();
    for (let i = 0; i < RESTARTS; i++) {
      const from = await sts.partition();
      if (!(await sts.nextStep(from, 40_000))) throw new Error(`no step from ${from} within 40 s (restart ${i})`);
      const t0 = Date.now();
      // Up to 20 s of drain, 3 s down, up to 60 s to ready, 10 s for the Lease holders: more than run()'s default.
      const r = await run(resolve(ROOT, 'hack', 'e2e-apiserver.sh'), ['restart', '3'], { timeoutMs: 150_000 });
      if (r.code !== 0) throw new Error(`restarting the API server failed: ${r.stderr}`);
      downFor.push(Date.now() - t0);
    }
    await waitHttp(`${env().CONTROLLER_METRICS_URL}/readyz`, 60_000);
    await sts.completed(rev, 120_000);
    const events = await stsEvents(sts.name);
    const lowered = events.filter((e) => e.reason === 'PartitionLowered');
    // No storm: each of our Events exists once (a repeat increments its count: a gate that failed twice
    // is one CheckFailed with count 2), and no step, start or completion was told twice.
    // (Ours only: the restarted kube-controller-manager starts a fresh Event cache of its own.)
    const ours = new Set(['RolloutStarted', 'PartitionLowered', 'CheckFailed', 'PrometheusError', 'RolloutCompleted', 'RolloutFailed', 'RollbackStarted', 'StrandedPodDeleted', 'PartitionRaised']);
    const seen = new Set<string>();
    const duplicated = events.filter((e) => ours.has(e.reason)).filter((e) => {
      const k = `${e.reason}|${e.message}`;
      const dup = seen.has(k);
      seen.add(k);
      return dup;
    });
    const once = new Set(['RolloutStarted', 'PartitionLowered', 'RolloutCompleted']);
    const repeated = [...duplicated, ...events.filter((e) => e.count > 1 && once.has(e.reason))];
    // The outage was real to the controller: its informers saw their watches fail and restarted.
    const restarts = readFileSync(resolve(env().E2E_DIR, 'logs', 'controller.log'), 'utf8').split('\n').filter((l) => l.includes('watch failed; restarting informer') && ms(JSON.parse(l).time) >= t1).length;
    const safety = await safetyReport(ns, sts.name);
    reportChaos({
      scenario: 'API server restart',
      tried: `${RESTARTS} stop/start of kube-apiserver (etcd kept) during a ${sts.replicas}-pod rollout, each down ~${Math.round(Math.max(...downFor) / 1000)} s with the restart`,
      survived: `Completed; informers restarted ${restarts} times and recovered; ${lowered.length} PartitionLowered Events for ${sts.replicas} steps, ${repeated.length} duplicated or repeated step Events; ${safety.gatedSteps} gated steps, ${violationsText(safety.violations)}`,
      ok: safety.violations.length === 0 && repeated.length === 0,
    });
    expect(safety.violations).toEqual([]);
    expect(safety.gatedSteps).toBe(sts.replicas);
    // No Event storm: at most one PartitionLowered per step (one may be lost while the API is away),
    // each told once.
    expect(lowered.length).toBeLessThanOrEqual(sts.replicas);
    expect(new Set(lowered.map((e) => e.message)).size).toBe(lowered.length);
    expect(repeated).toEqual([]);
    expect(restarts).toBeGreaterThanOrEqual(2);
  });
});

describe('chaos: Prometheus flapping', () => {
  it(`survives ${FLAPS} Prometheus crashes mid-rollout: errors never count as fails and never advance`, async () => {
    const seed = chaosSeed();
    const rnd = random(seed);
    // failure-threshold 3: every outage below yields more than 3 errors in a row, so if errors counted as
    // fails the rollout would be Failed.
    const sts = new Rollout(ns, 'flap', 2 + 2 * FLAPS, fastGate('flap', { [KEYS.failureThreshold]: '3' }));
    await sts.create();
    const rev = await sts.roll('registry.example/app:2');
    const labels = `namespace="${ns}",statefulset="${sts.name}"`;
    const outages: { from: number; to: number; errors: number }[] = [];
    const phases = new Set<string>();
    try {
      for (let i = 0; i < FLAPS; i++) {
        await sleep(1000 + rnd() * 2000);
        const errors0 = await metric('phased_rollout_checks_total', `${labels},result="error"`);
        // SIGKILL, a crash: Prometheus keeps its last samples (no staleness markers), so once it is
        // back the gate answers at once. (A SIGTERM'd one marks series stale and answers empty until its
        // first scrape, ~5 s later: those are fails — see docs/reliability.md.)
        await harnessProcess('kill', 'prometheus');
        const from = Date.now();
        await eventually(async () => expect(await sts.status()).toMatchObject({ gate: 'error' }), 10_000, 200);
        phases.add((await sts.status())?.phase);
        await sleep(4000);
        const errors = (await metric('phased_rollout_checks_total', `${labels},result="error"`)) - errors0;
        const to = Date.now();
        await harnessProcess('start', 'prometheus');
        await waitHttp(`${env().PROMETHEUS_URL}/-/ready`, 30_000);
        outages.push({ from, to, errors });
      }
    } finally {
      if (!(await harnessProcess('running', 'prometheus'))) await harnessProcess('start', 'prometheus');
      await waitHttp(`${env().PROMETHEUS_URL}/-/ready`, 30_000);
    }
    await sts.completed(rev, 120_000);
    // A step may follow a check that passed just before the kill; none starts a second later or after.
    const inOutage = lowerings(sts.name).filter((l) => outages.some((o) => l.at > o.from + 1000 && l.at < o.to));
    const failed = (await stsEvents(sts.name)).filter((e) => e.reason === 'RolloutFailed');
    const safety = await safetyReport(ns, sts.name);
    const minErrors = Math.min(...outages.map((o) => o.errors));
    reportChaos({
      scenario: 'Prometheus flapping',
      tried: `${FLAPS} SIGKILLs of Prometheus, each down 4 s, during a ${sts.replicas}-pod rollout (failure-threshold 3), seed ${seed}`,
      survived: `Completed, never Failed; ${minErrors}+ errors per outage, ${inOutage.length} steps during an outage; ${safety.gatedSteps} gated steps, ${violationsText(safety.violations)}`,
      ok: failed.length === 0 && inOutage.length === 0 && safety.violations.length === 0 && minErrors > 3,
    });
    expect(minErrors).toBeGreaterThan(3);
    expect(failed).toEqual([]);
    expect([...phases].filter((p) => p === 'Failed')).toEqual([]);
    expect(inOutage).toEqual([]);
    expect(safety.violations).toEqual([]);
    expect(safety.gatedSteps).toBe(sts.replicas);
  });
});

describe('chaos: the webhook down', () => {
  it('refuses an opted-in apply with the webhook error, rolls nothing, the policy still denies OnDelete; back up, the same apply is pinned', async () => {
    const sts = new Rollout(ns, 'nowebhook', 3);
    await sts.create();
    const before = await sts.get();
    const old = before.status.updateRevision as string;
    sts.manifest.spec.template.spec.containers[0]!.image = 'registry.example/app:2';
    let refused = '';
    let backstop = '';
    await harnessProcess('stop', 'webhook');
    try {
      const r = await kubectl(['apply', '-f', '-'], sts.manifest);
      refused = r.stderr;
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('failed calling webhook "statefulsets.phased-rollout.io"');
      // A write the webhook never sees (the controller's user is excluded by its matchConditions)
      // still meets the ValidatingAdmissionPolicy.
      const onDelete = await kubectl(['patch', 'statefulset', sts.name, '-n', ns, '--type', 'merge', '-p', '{"spec":{"updateStrategy":{"type":"OnDelete","rollingUpdate":null}}}'], undefined, env().CONTROLLER_KUBECONFIG);
      backstop = onDelete.stderr;
      expect(onDelete.code).not.toBe(0);
      // Two policies refuse it (no OnDelete for anyone; the controller changes no spec field but the
      // partition and a rollback's template): the API server evaluates them in no set order, and the
      // first denial is the one it reports.
      expect(onDelete.stderr).toMatch(/ValidatingAdmissionPolicy '(phased-rollout-no-ondelete|phased-rollout-controller-statefulsets)'/);
      await sleep(3000);
      const now = await sts.get();
      expect(now.metadata.generation).toBe(before.metadata.generation);
      expect(Object.values(await podRevisions(ns, sts.name))).toEqual([old, old, old]);
    } finally {
      await harnessProcess('start', 'webhook');
      await waitHttp(`${env().WEBHOOK_METRICS_URL}/readyz`);
    }
    const r = await kubectlOk(['apply', '-f', '-'], sts.manifest);
    expect(r.stderr).toContain('phased-rollout');
    const pinned = await sts.get();
    // (The API server adds maxUnavailable: 1 by default with the MaxUnavailableStatefulSet feature on.)
    expect(pinned.spec.updateStrategy).toMatchObject({ type: 'RollingUpdate', rollingUpdate: { partition: 3 } });
    const rev = await eventually(async () => {
      const s = await sts.get();
      expect(s.status.updateRevision).not.toBe(old);
      return s.status.updateRevision as string;
    }, 20_000, 200);
    await sts.completed(rev);
    const safety = await safetyReport(ns, sts.name);
    reportChaos({
      scenario: 'webhook down',
      tried: 'webhook process stopped; kubectl apply of a new image; an OnDelete patch that bypasses the webhook; webhook started; the same apply',
      survived: `apply refused (${/failed calling webhook "[^"]+"/.exec(refused)?.[0] ?? '?'}), nothing rolled; OnDelete denied by ${/ValidatingAdmissionPolicy '[^']+'/.exec(backstop)?.[0] ?? '?'}; after restart the apply was pinned at 3 and rolled gated (${violationsText(safety.violations)})`,
      ok: safety.violations.length === 0,
    });
    expect(safety.violations).toEqual([]);
  });
});

describe('chaos: a pod of the new revision never becomes ready', () => {
  it('holds the rollout; kubectl rollout undo recovers it with no manual pod deletion', async () => {
    const sts = new Rollout(ns, 'neverready', 3);
    await sts.create();
    const old = (await sts.get()).status.updateRevision as string;
    // No node has that much CPU: the updated pod stays Pending, never ready.
    const bad = await sts.roll('registry.example/app:2', (m) => {
      m.spec.template.spec.containers[0]!.resources = { requests: { cpu: '100000' } };
    });
    await eventually(async () => {
      const pod = await getJson(['pod', `${sts.name}-2`, '-n', ns]);
      expect(pod.metadata.labels['controller-revision-hash']).toBe(bad);
      expect(pod.status.phase).toBe('Pending');
    }, 60_000, 300);
    await sleep(3000);
    expect(await sts.partition()).toBe(2);
    expect(await sts.status()).toMatchObject({ phase: 'WaitingForPods' });
    const t0 = Date.now();
    await kubectlOk(['rollout', 'undo', `statefulset/${sts.name}`, '-n', ns]);
    await eventually(async () => {
      const s = await sts.get();
      expect(s.status.updateRevision).toBe(old);
      expect(Object.values(await podRevisions(ns, sts.name))).toEqual([old, old, old]);
      expect((await getJson(['pod', `${sts.name}-2`, '-n', ns])).status.conditions?.find((c: { type: string }) => c.type === 'Ready')?.status).toBe('True');
      expect(s.spec.updateStrategy.rollingUpdate.partition).toBe(3);
    }, 60_000, 300);
    const recovered = Date.now() - t0;
    const reasons = (await stsEvents(sts.name)).map((e) => e.reason);
    const safety = await safetyReport(ns, sts.name);
    reportChaos({
      scenario: 'stuck pod',
      tried: 'a revision whose pod stays Pending (never ready), then kubectl rollout undo',
      survived: `held at partition 2 (WaitingForPods); undo restored all 3 pods in ${(recovered / 1000).toFixed(1)} s with no manual delete (${reasons.includes('StrandedPodDeleted') ? 'StrandedPodDeleted' : 'no deletion needed'}); ${violationsText(safety.violations)}`,
      ok: safety.violations.length === 0,
    });
    expect(reasons).toContain('RollbackStarted');
    expect(safety.violations).toEqual([]);
  });
});
