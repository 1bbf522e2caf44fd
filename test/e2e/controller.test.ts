// The controller from dist/ against the real control plane, the real Prometheus and the gate exporter,
// driven through kubectl. Scenarios of the controller issue, in order.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { shipped, freePort, start, type Child } from '../support/process.js';
import { statefulSet } from '../support/statefulset.js';
import { fastGate } from './rollout.js';
import { createNamespace, deleteNamespace, env, getJson, harnessProcess, kubectl, kubectlOk, podRevisions, safetyReport, setGate, waitHttp } from './cluster.js';

jest.setTimeout(240_000);

let ns: string;
beforeAll(async () => {
  if (!env().CONTROLLER_METRICS_URL) throw new Error('the harness runs no controller: build dist/controller first (npm run build) and rerun e2e:up');
  ns = await createNamespace('e2e-ctl');
});
afterAll(async () => {
  await deleteNamespace(ns);
});

const FAST = fastGate;

interface ManifestOptions {
  replicas?: number;
  cpu?: string;
  minReadySeconds?: number;
}

function manifest(name: string, image: string, annotations: Record<string, string>, o: ManifestOptions = {}) {
  const m = statefulSet(name, { image, annotations, replicas: o.replicas ?? 3 });
  if (o.cpu) m.spec.template.spec.containers[0]!.resources = { requests: { cpu: o.cpu } };
  if (o.minReadySeconds) Object.assign(m.spec, { minReadySeconds: o.minReadySeconds });
  return { ...m, metadata: { ...m.metadata, namespace: ns } };
}

const apply = async (m: unknown) => kubectlOk(['apply', '-f', '-'], m);
const sts = (name: string) => getJson(['statefulset', name, '-n', ns]);
const status = async (name: string) => JSON.parse((await sts(name)).metadata.annotations?.[KEYS.status] ?? 'null');
const partition = async (name: string) => (await sts(name)).spec.updateStrategy.rollingUpdate.partition as number;

async function events(name: string): Promise<{ reason: string; message: string; count: number }[]> {
  const list = await getJson<{ items: { reason: string; message: string; count: number; firstTimestamp: string; involvedObject: { kind: string; name: string } }[] }>(['events', '-n', ns]);
  return list.items
    .filter((e) => e.involvedObject.kind === 'StatefulSet' && e.involvedObject.name === name)
    .sort((a, b) => a.firstTimestamp.localeCompare(b.firstTimestamp))
    .map(({ reason, message, count }) => ({ reason, message, count }));
}

/** created makes a StatefulSet on revision 1 with all pods Ready. */
async function created(name: string, annotations: Record<string, string>, replicas = 3, o: ManifestOptions = {}): Promise<string> {
  await apply(manifest(name, 'registry.example/app:1', annotations, { ...o, replicas }));
  await eventually(async () => expect((await sts(name)).status.readyReplicas ?? 0).toBe(replicas), 60_000, 250);
  return (await sts(name)).status.updateRevision as string;
}

/** newRevision applies a new image and waits for the StatefulSet controller to name the revision. */
async function newRevision(name: string, image: string, annotations: Record<string, string>, o: ManifestOptions = {}): Promise<string> {
  const before = (await sts(name)).status.updateRevision;
  await apply(manifest(name, image, annotations, o));
  return eventually(async () => {
    const s = await sts(name);
    expect(s.status.updateRevision).not.toBe(before);
    return s.status.updateRevision as string;
  }, 20_000, 200);
}

async function completed(name: string, revision: string, replicas = 3, timeoutMs = 90_000): Promise<void> {
  await eventually(async () => {
    expect(await status(name)).toMatchObject({ phase: 'Completed', revision });
    expect(await partition(name)).toBe(replicas);
    expect(Object.values(await podRevisions(ns, name))).toEqual(Array(replicas).fill(revision));
  }, timeoutMs, 500);
}

describe('1: gate passing', () => {
  it('rolls from the highest ordinal down, one pod per passed gate, then Completed and re-pinned', async () => {
    const name = 'pass';
    const ann = FAST(name);
    await setGate(name, '1');
    const old = await created(name, ann);
    const rev = await newRevision(name, 'registry.example/app:2', ann);
    // Sample the pods while it rolls: which pod moved to the new revision, in what order.
    const order: string[] = [];
    const sample = async (): Promise<void> => {
      const revs = await podRevisions(ns, name);
      // Two pods can both move between samples on a loaded machine; one sample cannot order them,
      // so a tie is listed highest ordinal first. The PartitionLowered events below order every step.
      const moved = Object.entries(revs).filter(([pod, r]) => r === rev && !order.includes(pod)).map(([pod]) => pod);
      order.push(...moved.sort((a, b) => Number(b.split('-').pop()) - Number(a.split('-').pop())));
    };
    await eventually(async () => {
      await sample();
      expect(await status(name)).toMatchObject({ phase: 'Completed', revision: rev });
    }, 90_000, 150);
    await completed(name, rev);
    // The last pod can move after a sample and before the read that saw Completed: one more sample.
    await sample();
    expect(order).toEqual(['pass-2', 'pass-1', 'pass-0']);
    // That the partition reached 0 is read from the events, not sampled: partition 0 lasts only one
    // pod's start and two 1 s checks, shorter than a sampling round on a loaded machine.
    const ev = await events(name);
    const lowered = ev.filter((e) => e.reason === 'PartitionLowered').map((e) => e.message);
    expect(lowered).toEqual([
      `partition 3 -> 2 after 2/2 passing checks of revision ${rev}; pod pass-2 rolls next`,
      `partition 2 -> 1 after 2/2 passing checks of revision ${rev}; pod pass-1 rolls next`,
      `partition 1 -> 0 after 2/2 passing checks of revision ${rev}; pod pass-0 rolls next`,
    ]);
    expect(ev.map((e) => e.reason)).toEqual(expect.arrayContaining(['RolloutStarted', 'RolloutCompleted']));
    expect(old).not.toBe(rev);
    // Every step was preceded by its streak: at least 2 passing checks per step plus the final verification.
    const metrics = await (await fetch(`${env().CONTROLLER_METRICS_URL}/metrics`)).text();
    const passes = Number(new RegExp(`phased_rollout_checks_total\\{namespace="${ns}",statefulset="${name}",result="pass"\\} (\\d+)`).exec(metrics)?.[1]);
    expect(passes).toBeGreaterThanOrEqual(2 * 4);
    expect(metrics).toContain(`phased_rollout_partition_steps_total{namespace="${ns}",statefulset="${name}"} 3`);
  });
});

describe('2: gate failing', () => {
  it('moves no pod, fails after failure-threshold, stays failed when the gate heals; retry or a new revision restarts it', async () => {
    const name = 'fail';
    const ann = FAST(name, { [KEYS.failureThreshold]: '3' });
    await setGate(name, 'absent');
    const old = await created(name, ann);
    await newRevision(name, 'registry.example/app:2', ann);
    await eventually(async () => expect(await status(name)).toMatchObject({ phase: 'Failed' }), 60_000, 300);
    expect(await partition(name)).toBe(3);
    expect(Object.values(await podRevisions(ns, name))).toEqual([old, old, old]);
    expect((await events(name)).map((e) => e.reason)).toContain('RolloutFailed');
    expect((await status(name)).message).toMatch(/gate failed 3 times in a row at partition 3/);

    await setGate(name, '1');
    await new Promise((r) => setTimeout(r, 5000));
    expect(await status(name)).toMatchObject({ phase: 'Failed' });
    expect(await partition(name)).toBe(3);

    // Retrying through the kubectl plugin restarts the gate, which now passes.
    const retry = await kubectl(['phased-rollout', 'retry', name, '-n', ns]);
    expect(retry).toMatchObject({ code: 0, stdout: `statefulset.apps/${name} checks restarted\n` });
    const rev2 = (await sts(name)).status.updateRevision as string;
    await completed(name, rev2);

    // And a new revision restarts a Failed rollout too.
    await setGate(name, 'absent');
    await newRevision(name, 'registry.example/app:3', ann);
    await eventually(async () => expect(await status(name)).toMatchObject({ phase: 'Failed' }), 60_000, 300);
    await setGate(name, '1');
    const rev4 = await newRevision(name, 'registry.example/app:4', ann);
    await completed(name, rev4);
  });
});

describe('3: Prometheus outage', () => {
  it('shows the error, advances nothing, fails nothing, and resumes when Prometheus is back', async () => {
    const name = 'outage';
    // More errors than failure-threshold happen during the outage: errors must not count as fails. The
    // threshold still leaves room for the empty answers of a Prometheus that has just restarted and not
    // yet scraped the gate (those are fails, as SPEC §4.3 says): Prometheus 2.42 applies its target list
    // on a 5 s tick, so the first scrape after a start comes 5-7 s later, i.e. up to ~7 fails at a 1 s
    // period on a busy machine. A threshold of 6 failed here once; 15 leaves twice that.
    const ann = FAST(name, { [KEYS.failureThreshold]: '15' });
    const errors = async () =>
      Number(new RegExp(`phased_rollout_checks_total\\{namespace="${ns}",statefulset="${name}",result="error"\\} (\\d+)`).exec(await (await fetch(`${env().CONTROLLER_METRICS_URL}/metrics`)).text())?.[1] ?? 0);
    await setGate(name, '1');
    await created(name, ann);
    await harnessProcess('stop', 'prometheus');
    try {
      await newRevision(name, 'registry.example/app:2', ann);
      await eventually(async () => expect(await status(name)).toMatchObject({ phase: 'Checking', gate: 'error', message: expect.stringContaining('Prometheus error') }), 30_000, 300);
      await eventually(async () => expect(await errors()).toBeGreaterThanOrEqual(17), 40_000, 300);
      expect(await partition(name)).toBe(3);
      expect(await status(name)).toMatchObject({ phase: 'Checking', gate: 'error' });
      expect((await events(name)).map((e) => e.reason)).toContain('PrometheusError');
    } finally {
      await harnessProcess('start', 'prometheus');
      await waitHttp(`${env().PROMETHEUS_URL}/-/ready`, 30_000);
    }
    const rev = (await sts(name)).status.updateRevision as string;
    await completed(name, rev);
  });
});

describe('4: kubectl rollout undo mid-rollout', () => {
  it('returns the pods to the old revision without gates', async () => {
    const name = 'undo';
    const ann = FAST(name);
    await setGate(name, '1');
    const old = await created(name, ann);
    const rev = await newRevision(name, 'registry.example/app:2', ann);
    await eventually(async () => expect(Object.values(await podRevisions(ns, name)).filter((r) => r === rev).length).toBeGreaterThanOrEqual(1), 60_000, 200);
    // From here the gate fails: only a gate-free revert can bring the pods back.
    await setGate(name, 'absent');
    await kubectlOk(['rollout', 'undo', `statefulset/${name}`, '-n', ns]);
    await eventually(async () => {
      const s = await sts(name);
      expect(s.status.updateRevision).toBe(old);
      expect(Object.values(await podRevisions(ns, name))).toEqual([old, old, old]);
      expect(s.spec.updateStrategy.rollingUpdate.partition).toBe(3);
      expect(await status(name)).toMatchObject({ phase: 'Idle', revision: old });
    }, 60_000, 300);
    expect((await events(name)).map((e) => e.reason)).toContain('RollbackStarted');
  });
});

describe('5: a revision whose pods never become Ready, then a fixed one', () => {
  it('replaces the stuck pod and completes the fixed rollout without manual pod deletion', async () => {
    const name = 'stuck';
    const ann = FAST(name);
    await setGate(name, '1');
    const old = await created(name, ann);
    // No node has that much CPU: the updated pod stays Pending, never Ready.
    const bad = await newRevision(name, 'registry.example/app:2', ann, { cpu: '100000' });
    await eventually(async () => {
      const pod = await getJson(['pod', `${name}-2`, '-n', ns]);
      expect(pod.metadata.labels['controller-revision-hash']).toBe(bad);
      expect(pod.status.phase).toBe('Pending');
    }, 60_000, 300);
    await new Promise((r) => setTimeout(r, 3000));
    expect(await partition(name)).toBe(2);
    expect(await status(name)).toMatchObject({ phase: 'WaitingForPods' });

    const fixed = await newRevision(name, 'registry.example/app:3', ann);
    await completed(name, fixed);
    const reasons = (await events(name)).map((e) => e.reason);
    expect(reasons).toContain('StrandedPodDeleted');
    expect(old).not.toBe(fixed);
  });
});

describe('6: the controller killed mid-rollout', () => {
  it('completes after repeated SIGKILLs, and never lowers the partition twice for one gate', async () => {
    const name = 'killed';
    const ann = FAST(name, { [KEYS.successThreshold]: '3' });
    await setGate(name, '1');
    await created(name, ann, 4);
    const rev = await newRevision(name, 'registry.example/app:2', ann, { replicas: 4 });
    const pidFile = resolve(env().E2E_DIR, 'pids', 'controller.pid');
    for (const delay of [700, 2300, 1500, 3100]) {
      await new Promise((r) => setTimeout(r, delay));
      const pid = Number(readFileSync(pidFile, 'utf8').split(' ')[0]);
      process.kill(pid, 'SIGKILL');
      await eventually(async () => expect(await harnessProcess('running', 'controller')).toBe(false), 5000, 50);
      await harnessProcess('start', 'controller');
    }
    await waitHttp(`${env().CONTROLLER_METRICS_URL}/readyz`);
    await completed(name, rev, 4);
    // The independent checker judges every step from the audit log: each decrement once, each gated.
    const safety = await safetyReport(ns, name);
    expect(safety.violations).toEqual([]);
    expect(safety).toMatchObject({ lowerings: 4, gatedSteps: 4 });
    // Events are best effort: a SIGKILL between the partition patch and its Event loses that Event. Those
    // that exist each tell of one decrement after a full streak of 3 (a repeat would show count > 1).
    const lowered = (await events(name)).filter((e) => e.reason === 'PartitionLowered');
    const steps = lowered.map((e) => /partition (\d+) -> (\d+) after (\d+)\/(\d+)/.exec(e.message)!.slice(1).map(Number));
    expect(new Set(steps.map(([from]) => from)).size).toBe(steps.length);
    for (const [, , streak, need] of steps) expect(streak).toBe(need);
    for (const e of lowered) expect(e.count).toBe(1);
  });
});

describe('7: leader election', () => {
  it('only the leader acts; killing it hands over', async () => {
    const e = env();
    await harnessProcess('stop', 'controller');
    const entry = shipped('controller');
    const children: { child: Child; metrics: number }[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const metrics = await freePort();
        const child = start(entry, [
          '--kubeconfig', e.CONTROLLER_KUBECONFIG, '--prometheus-url', e.PROMETHEUS_URL, '--metrics-port', String(metrics), '--bind-address', '127.0.0.1',
          '--leader-elect', '--leader-election-lease-duration', '4s', '--leader-election-renew-deadline', '3s', '--leader-election-renew-period', '1s', '--leader-election-name', 'e2e-leader',
        ]);
        children.push({ child, metrics });
      }
      const leaderGauge = async (m: number) => Number(/^phased_rollout_leader (\d+)/m.exec(await (await fetch(`http://127.0.0.1:${m}/metrics`)).text())?.[1]);
      const leaders = async () => Promise.all(children.map(async (c) => (c.child.proc.exitCode === null ? leaderGauge(c.metrics).catch(() => 0) : 0)));
      await eventually(async () => expect((await leaders()).sort()).toEqual([0, 1]), 30_000, 200);

      const name = 'leader';
      const ann = FAST(name);
      await setGate(name, '1');
      await created(name, ann);
      const rev = await newRevision(name, 'registry.example/app:2', ann);
      await eventually(async () => expect(await partition(name)).toBeLessThan(3), 60_000, 200);

      const before = await leaders();
      const leader = children[before.indexOf(1)]!;
      const standby = children[before.indexOf(0)]!;
      expect(standby.child.lines().some((l) => l.msg === 'partition set')).toBe(false);
      leader.child.proc.kill('SIGKILL');
      await eventually(async () => expect(await leaderGauge(standby.metrics)).toBe(1), 20_000, 200);
      await completed(name, rev);
      expect(standby.child.lines().some((l) => l.msg === 'partition set')).toBe(true);
      // SIGTERM: release the Lease, exit 0 within 10 s (SPEC §5).
      const t0 = Date.now();
      standby.child.proc.kill('SIGTERM');
      expect((await standby.child.exited).code).toBe(0);
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(standby.child.lines().map((l) => l.msg)).toEqual(expect.arrayContaining(['lease released', 'shutdown complete']));
    } finally {
      for (const c of children) if (c.child.proc.exitCode === null && c.child.proc.signalCode === null) c.child.proc.kill('SIGTERM');
      await Promise.all(children.map((c) => c.child.exited));
      await harnessProcess('start', 'controller');
      await waitHttp(`${e.CONTROLLER_METRICS_URL}/readyz`);
    }
  });
});

describe('8: pause', () => {
  it('paused holds the partition; removing it resumes', async () => {
    const name = 'pause';
    const ann = FAST(name);
    await setGate(name, '1');
    await created(name, ann);
    const paused = { ...ann, [KEYS.paused]: 'true' };
    const rev = await newRevision(name, 'registry.example/app:2', paused);
    await eventually(async () => expect(await status(name)).toMatchObject({ phase: 'Paused', partition: 3 }), 30_000, 300);
    await new Promise((r) => setTimeout(r, 4000));
    expect(await partition(name)).toBe(3);
    const table = await kubectl(['phased-rollout', 'status', '-n', ns]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`^${name}\\s+Paused\\s+3/3\\s+0/3\\s+-\\s+\\d+s\\s+paused at partition 3`, 'm'));
    expect(await kubectl(['phased-rollout', 'resume', name, '-n', ns])).toMatchObject({ code: 0 });
    await completed(name, rev);
    // Pausing again through the plugin is an annotation the webhook lets through.
    expect(await kubectl(['phased-rollout', 'pause', name, '-n', ns])).toMatchObject({ code: 0, stdout: `statefulset.apps/${name} paused\n` });
    expect((await sts(name)).metadata.annotations[KEYS.paused]).toBe('true');
    const missing = await kubectl(['phased-rollout', 'pause', 'no-such', '-n', ns]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('error: 404');
    expect((await events(name)).map((e) => e.reason)).toEqual(expect.arrayContaining(['RolloutPaused', 'RolloutResumed', 'RolloutCompleted']));
  });
});

describe('kubectl phased-rollout status', () => {
  it('-w -o json follows a rollout live, -A lists across namespaces, and a table is readable at a glance', async () => {
    const name = 'watched';
    const ann = FAST(name, { [KEYS.successThreshold]: '2' });
    await setGate(name, '1');
    await created(name, ann);
    const e = env();
    const watcher = start(shipped('plugin'), ['status', name, '-n', ns, '-w', '-o', 'json'], { KUBECONFIG: e.KUBECONFIG });
    try {
      const rev = await newRevision(name, 'registry.example/app:2', ann);
      await completed(name, rev);
      // Each change printed one JSON array; together they tell the story of the rollout.
      await eventually(() => expect(watcher.stdout()).toContain('"phase": "Completed"'), 10_000, 200);
    } finally {
      watcher.proc.kill('SIGINT');
    }
    expect((await watcher.exited).code).toBe(0);
    const snapshots = watcher
      .stdout()
      .split(/\n(?=\[)/)
      .map((chunk) => JSON.parse(chunk) as { phase: string; partition: number; streak?: number }[]);
    const phases = snapshots.map((s) => s[0]?.phase);
    expect(phases).toEqual(expect.arrayContaining(['Checking', 'Completed']));
    expect(phases[phases.length - 1]).toBe('Completed');
    // Steps show up as they happen (kwok pods are quick, so some states fall between two prints).
    expect(new Set(snapshots.map((s) => s[0]?.partition).filter((p) => p !== undefined && p < 3)).size).toBeGreaterThanOrEqual(2);
    expect(snapshots.some((s) => s[0]?.streak === 1)).toBe(true); // the streak shows while it grows

    const all = await kubectl(['phased-rollout', 'status', '-A', '-o', 'json']);
    expect(all.code).toBe(0);
    expect((JSON.parse(all.stdout) as { namespace: string; name: string }[]).filter((r) => r.namespace === ns).map((r) => r.name)).toContain(name);
    const table = await kubectl(['phased-rollout', 'status', '-A']);
    expect(table.stdout).toMatch(new RegExp(`^${ns}\\s+${name}\\s+Completed\\s+3/3\\s+3/3\\s+(\\S+\\s+)?\\d+[smhd]`, 'm'));
  });
});

describe('safety review (issue 11) on the real cluster', () => {
  it('item 11: only the controller writes the status annotation; a removal gets it back (issue 36), with a warning', async () => {
    const name = 'forge';
    const ann = FAST(name);
    await setGate(name, '1');
    await created(name, ann);
    await eventually(async () => expect(await status(name)).toMatchObject({ phase: 'Idle' }), 30_000, 300);
    const forged = await kubectl(['annotate', 'statefulset', name, '-n', ns, '--overwrite', `${KEYS.status}={"phase":"Completed"}`]);
    expect(forged.code).not.toBe(0);
    expect(forged.stderr).toContain(`denied the request: phased-rollout: annotation ${KEYS.status} of StatefulSet ${ns}/${name} is written by the phased-rollout controller only`);
    const before = (await sts(name)).metadata.annotations[KEYS.status];
    const removed = await kubectl(['annotate', 'statefulset', name, '-n', ns, `${KEYS.status}-`]);
    expect(removed.code).toBe(0);
    expect(removed.stderr).toContain('Warning: phased-rollout: phased-rollout.io/status kept (the controller\'s record); to retry: kubectl phased-rollout retry');
    // Stored as it was: the webhook put it back in the same request.
    expect((await sts(name)).metadata.annotations[KEYS.status]).toBe(before);
    // A retry of a rollout that has not failed is refused by the plugin, and changes nothing.
    const retry = await kubectl(['phased-rollout', 'retry', name, '-n', ns]);
    expect(retry.code).not.toBe(0);
    expect(retry.stderr).toContain(`statefulset.apps/${name} has no Failed rollout nor inconclusive hold to retry (phase Idle`);
  });

  it('item 8: kubectl scale mid-rollout raises the partition, so new pods start on the current revision', async () => {
    const name = 'grow';
    const ann = FAST(name, { [KEYS.successThreshold]: '3', [KEYS.initialDelaySeconds]: '2' });
    await setGate(name, '1');
    // minReadySeconds makes the StatefulSet controller wait 3 s between creating two pods, so the
    // order of events is fixed: the controller raises the partition before grow-4 is created.
    const slow = { minReadySeconds: 3 };
    const old = await created(name, ann, 3, slow);
    const rev = await newRevision(name, 'registry.example/app:2', ann, slow);
    // Let exactly one step happen, then hold the rollout with a failing gate.
    await eventually(async () => expect(await partition(name)).toBe(2), 60_000, 100);
    await setGate(name, 'absent');
    await eventually(async () => expect(await status(name)).toMatchObject({ gate: 'failing', partition: 2 }), 60_000, 300);
    await kubectlOk(['scale', 'statefulset', name, '-n', ns, '--replicas', '5']);
    await eventually(async () => expect(await partition(name)).toBe(5), 20_000, 200);
    await eventually(async () => expect((await sts(name)).status.readyReplicas ?? 0).toBe(5), 60_000, 300);
    const revs = await podRevisions(ns, name);
    // grow-3 may have been created in the instant before the raise; grow-4 comes after it.
    expect(revs[`${name}-4`]).toBe(old);
    expect([revs[`${name}-0`], revs[`${name}-1`], revs[`${name}-2`]]).toEqual([old, old, rev]);
    expect((await events(name)).map((e) => e.reason)).toContain('PartitionRaised');
    expect(await partition(name)).toBe(5);
  });
});

describe('--namespace scope', () => {
  it('a controller scoped to one namespace leaves StatefulSets elsewhere alone', async () => {
    const e = env();
    const other = await createNamespace('e2e-other');
    await harnessProcess('stop', 'controller');
    const metrics = await freePort();
    const scoped = start(shipped('controller'), ['--kubeconfig', e.CONTROLLER_KUBECONFIG, '--prometheus-url', e.PROMETHEUS_URL, '--metrics-port', String(metrics), '--bind-address', '127.0.0.1', '--namespace', ns]);
    try {
      await waitHttp(`http://127.0.0.1:${metrics}/readyz`);
      const name = 'scoped';
      const ann = FAST(name);
      await setGate(name, '1');
      const outside = manifest(name, 'registry.example/app:1', ann);
      await kubectlOk(['apply', '-f', '-'], { ...outside, metadata: { ...outside.metadata, namespace: other } });
      await created(name, ann);
      const rev = await newRevision(name, 'registry.example/app:2', ann);
      const outside2 = manifest(name, 'registry.example/app:2', ann);
      await kubectlOk(['apply', '-f', '-'], { ...outside2, metadata: { ...outside2.metadata, namespace: other } });
      await completed(name, rev);
      const there = await getJson(['statefulset', name, '-n', other]);
      expect(there.metadata.annotations[KEYS.status]).toBeUndefined();
      expect(there.spec.updateStrategy.rollingUpdate.partition).toBe(3);
    } finally {
      scoped.proc.kill('SIGTERM');
      await scoped.exited;
      await deleteNamespace(other);
      await harnessProcess('start', 'controller');
      await waitHttp(`${e.CONTROLLER_METRICS_URL}/readyz`);
    }
  });
});

describe('controller RBAC', () => {
  it('runs as its ServiceAccount with the shipped least-privilege role', async () => {
    const can = async (verb: string, resource: string) =>
      (await kubectl(['auth', 'can-i', verb, resource, '--as', 'system:serviceaccount:phased-rollout-system:phased-rollout-controller', '-A'])).stdout.trim();
    expect(await can('patch', 'statefulsets.apps')).toBe('yes');
    expect(await can('delete', 'pods')).toBe('yes');
    expect(await can('update', 'statefulsets.apps')).toBe('no');
    expect(await can('list', 'secrets')).toBe('no');
    expect(await can('create', 'pods')).toBe('no');
  });
});

describe('independent safety checker over this file\'s run', () => {
  it('every partition step of every scenario above was gated (audit log and gate history)', async () => {
    const r = await safetyReport(ns);
    console.log(`safety checker: ${JSON.stringify({ lowerings: r.lowerings, gatedSteps: r.gatedSteps, revertsOrBypasses: r.revertsOrBypasses, violations: r.violations.length })}`);
    expect(r.violations.map((v) => `${v.at} ${v.statefulset}: ${v.why}\n  ${v.request}`)).toEqual([]);
    expect(r.gatedSteps).toBeGreaterThanOrEqual(10);
  });
});
