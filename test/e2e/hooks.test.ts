// Member hooks on the real node: a RolloutGate whose `hooks` run real Jobs (busybox) around the
// replacement of the StatefulSet's real pods, under the controller's shipped RBAC and Job policy, beside
// the usual Prometheus gate so that the safety checker judges every step.
//
// On it: each pod's prepare Job finished before the pod was replaced, its settle Job after it came back
// and before the next pod's prepare; a prepare hook that fails rolls the release back, and the rollback
// runs the prepare hook of the pod it restores; a hook's Job deleted mid-run is run again before the
// step; a controller killed mid-hook: the restarted one waits for that Job and starts no second one.
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { createNamespace, deleteNamespace, getJson, harnessProcess, kubectlOk, podRevisions, safetyReport, setGate } from './cluster.js';
import { needRealNode, onRealNode, realNodeIt, realRollout, version } from './real-node.js';
import { fastGate } from './rollout.js';

jest.setTimeout(300_000);
const { realIt, skipped } = realNodeIt();

let ns = '';
beforeAll(async () => {
  if (skipped) return;
  ns = await createNamespace('e2e-hooks');
});
afterAll(async () => {
  if (ns) await deleteNamespace(ns);
});

const jobHook = (name: string, when: 'prepare' | 'settle', script: string) => ({
  name,
  when,
  timeoutSeconds: 60,
  template: { spec: { template: { spec: onRealNode({ terminationGracePeriodSeconds: 1, containers: [{ name: 'hook', image: needRealNode().busybox, imagePullPolicy: 'Never', command: ['sh', '-c', script] }] }) } } },
});
const policy = (name: string, hooks: unknown[], timing: Record<string, unknown> = {}) => ({ apiVersion: 'phased-rollout.io/v1alpha1', kind: 'RolloutGate', metadata: { name, namespace: ns }, spec: { hooks, ...timing } });
const SAY = 'echo "$PHASED_ROLLOUT_WHEN $PHASED_ROLLOUT_POD direction=$PHASED_ROLLOUT_DIRECTION updated=$PHASED_ROLLOUT_UPDATED_PODS"';

type Job = { metadata: { name: string; uid: string; creationTimestamp: string; annotations: Record<string, string> }; spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } }; status: { completionTime?: string; conditions?: { type: string; status: string }[] } };
const hookJobs = async (sts: string) => (await getJson<{ items: Job[] }>(['jobs', '-n', ns, '-l', `phased-rollout.io/statefulset=${sts}`])).items.filter((j) => j.metadata.annotations['phased-rollout.io/hook']);
const envOf = (j: Job) => Object.fromEntries(j.spec.template.spec.containers[0]!.env.map((e) => [e.name, e.value]));
const complete = (j: Job) => j.status.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') === true;
const podCreated = async (name: string) => Date.parse((await getJson(['pod', name, '-n', ns])).metadata.creationTimestamp as string);
type Ev = { reason: string; message: string; involvedObject: { name: string } };
const eventsOf = async (sts: string) => (await getJson<{ items: Ev[] }>(['events', '-n', ns])).items.filter((e) => e.involvedObject.name === sts);

describe(`member hooks on the real node${skipped}`, () => {
  realIt("each pod's prepare Job finishes before the pod is replaced, its settle Job after it is back and before the next pod's prepare", async () => {
    await kubectlOk(['apply', '-f', '-'], policy('around', [jobHook('before', 'prepare', SAY), jobHook('after', 'settle', SAY)]));
    await setGate('hk', '1');
    const sts = realRollout(ns, 'hk', 3, fastGate('hk', { [KEYS.gates]: 'around', [KEYS.successThreshold]: '1' }));
    await sts.create();
    const rev = await version(sts, '2');
    await sts.completed(rev, 240_000);
    const jobs = (await hookJobs('hk')).filter((j) => j.metadata.annotations['phased-rollout.io/revision'] === rev);
    console.log(`hook Jobs of hk: ${jobs.map((j) => `${j.metadata.annotations['phased-rollout.io/hook']} ${envOf(j).PHASED_ROLLOUT_POD} partition ${j.metadata.annotations['phased-rollout.io/partition']} ${complete(j) ? 'complete' : 'not complete'}`).join('; ')}`);
    const find = (when: string, pod: string) => jobs.filter((j) => j.metadata.annotations['phased-rollout.io/hook'] === when && envOf(j).PHASED_ROLLOUT_POD === pod);
    for (const pod of ['hk-2', 'hk-1', 'hk-0']) {
      const [prepare, ...morePrepare] = find('prepare', pod);
      const [settle, ...moreSettle] = find('settle', pod);
      expect([morePrepare.length, moreSettle.length]).toEqual([0, 0]);
      expect(prepare && complete(prepare) && settle && complete(settle)).toBe(true);
      // API times are whole seconds: "at or before".
      const created = await podCreated(pod);
      expect(Date.parse(prepare!.status.completionTime!)).toBeLessThanOrEqual(created);
      expect(Date.parse(settle!.metadata.creationTimestamp)).toBeGreaterThanOrEqual(created);
      expect(envOf(prepare!)).toMatchObject({ PHASED_ROLLOUT_HOOK: 'around/hook.before', PHASED_ROLLOUT_DIRECTION: 'forward', PHASED_ROLLOUT_REVISION: rev });
    }
    // The next pod's prepare comes after the last pod's settle.
    expect(Date.parse(find('prepare', 'hk-1')[0]!.metadata.creationTimestamp)).toBeGreaterThanOrEqual(Date.parse(find('settle', 'hk-2')[0]!.status.completionTime!));
    // A switchover's candidates: the pods already on the new revision.
    const logs = await kubectlOk(['logs', '-n', ns, `job/${find('prepare', 'hk-0')[0]!.metadata.name}`]);
    expect(logs.stdout).toContain('prepare hk-0 direction=forward updated=hk-1,hk-2');
    const reasons = (await eventsOf('hk')).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['HookStarted', 'HookSucceeded']));
    expect((await sts.status())?.history?.['around/hook.before']?.at(-1)).toMatchObject({ result: 'pass' });
    const safety = await safetyReport(ns, 'hk');
    expect(safety.violations).toEqual([]);
    expect(safety.gatedSteps).toBe(3);
  });

  realIt('a prepare hook that fails rolls the release back, and the rollback prepares the pod it restores first', async () => {
    // Fails for the last pod of the rollout (no candidate left, say); succeeds in the rollback.
    const script = `${SAY}; if [ "$PHASED_ROLLOUT_DIRECTION" = forward ] && [ "$PHASED_ROLLOUT_ORDINAL" = 0 ]; then echo "no candidate for the switchover" >&2; exit 1; fi`;
    await kubectlOk(['apply', '-f', '-'], policy('fragile', [jobHook('before', 'prepare', script)], { failureThreshold: 1 }));
    await setGate('hk-fail', '1');
    const sts = realRollout(ns, 'hk-fail', 2, fastGate('hk-fail', { [KEYS.gates]: 'fragile', [KEYS.successThreshold]: '1', [KEYS.onFailure]: 'rollback' }));
    await sts.create();
    const old = (await sts.get()).status.updateRevision as string;
    const bad = await version(sts, 'bad');
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'RolledBack', failedRevision: bad }), 180_000, 500);
    await eventually(async () => expect(Object.values(await podRevisions(ns, 'hk-fail'))).toEqual([old, old]), 120_000, 500);
    const jobs = await hookJobs('hk-fail');
    const back = jobs.filter((j) => envOf(j).PHASED_ROLLOUT_DIRECTION === 'rollback');
    expect(back.map((j) => envOf(j).PHASED_ROLLOUT_POD)).toEqual(['hk-fail-1']);
    expect(complete(back[0]!)).toBe(true);
    expect(Date.parse(back[0]!.status.completionTime!)).toBeLessThanOrEqual(await podCreated('hk-fail-1'));
    // The pod whose prepare failed was never replaced: it ran the old revision throughout.
    expect(envOf(back[0]!).PHASED_ROLLOUT_REVISION).toBe(old);
    const failed = (await eventsOf('hk-fail')).filter((e) => e.reason === 'HookFailed').map((e) => e.message);
    expect(failed).toEqual([expect.stringMatching(/^prepare hook fragile\/hook\.before for pod hk-fail-0 failed: Job hk-fail-hook-[0-9a-f]{10} failed/)]);
    expect((await safetyReport(ns, 'hk-fail')).violations).toEqual([]);
  });

  realIt("a hook's Job deleted mid-run is run again before the step; a controller killed mid-hook: the restarted one waits for that Job, then runs its own", async () => {
    await kubectlOk(['apply', '-f', '-'], policy('slow', [jobHook('before', 'prepare', `${SAY}; sleep 6`)]));
    await setGate('hk-kill', '1');
    const sts = realRollout(ns, 'hk-kill', 2, fastGate('hk-kill', { [KEYS.gates]: 'slow', [KEYS.successThreshold]: '1' }));
    await sts.create();
    const rev = await version(sts, '2');
    const running = (partition: number) =>
      eventually(async () => {
        const js = (await hookJobs('hk-kill')).filter((j) => j.metadata.annotations['phased-rollout.io/revision'] === rev && j.metadata.annotations['phased-rollout.io/partition'] === String(partition) && !complete(j));
        expect(js).toHaveLength(1);
        return js[0]!;
      }, 90_000, 250);
    const first = await running(1);
    await kubectlOk(['delete', 'job', first.metadata.name, '-n', ns, '--wait=false']);
    // The step waits for a run that succeeds: a new Job, not the deleted one's absence.
    const again = await eventually(async () => {
      const js = (await hookJobs('hk-kill')).filter((j) => j.metadata.annotations['phased-rollout.io/partition'] === '1' && j.metadata.uid !== first.metadata.uid);
      expect(js).toHaveLength(1);
      return js[0]!;
    }, 90_000, 250);
    expect(await sts.partition()).toBe(2);
    const second = await running(0);
    await harnessProcess('kill', 'controller');
    await new Promise((r) => setTimeout(r, 1000));
    await harnessProcess('start', 'controller');
    await sts.completed(rev, 180_000);
    const jobs = (await hookJobs('hk-kill')).filter((j) => j.metadata.annotations['phased-rollout.io/revision'] === rev);
    const at1 = jobs.find((j) => j.metadata.uid === again.metadata.uid)!;
    expect(complete(at1)).toBe(true);
    expect(Date.parse(at1.status.completionTime!)).toBeLessThanOrEqual(await podCreated('hk-kill-1'));
    // The Job running at the kill was waited for, never believed (a restarted controller believes only
    // the Jobs it created itself): a second Job at partition 0 ran after it, and the pod went after that.
    const at0 = jobs.filter((j) => j.metadata.annotations['phased-rollout.io/partition'] === '0');
    expect(at0.map((j) => j.metadata.uid)).toContain(second.metadata.uid);
    expect(at0).toHaveLength(2);
    const rerun = at0.find((j) => j.metadata.uid !== second.metadata.uid)!;
    const waited = at0.find((j) => j.metadata.uid === second.metadata.uid)!;
    expect(complete(waited) && complete(rerun)).toBe(true);
    expect(Date.parse(waited.status.completionTime!)).toBeLessThanOrEqual(Date.parse(rerun.metadata.creationTimestamp!));
    expect(Date.parse(rerun.status.completionTime!)).toBeLessThanOrEqual(await podCreated('hk-kill-0'));
    expect((await safetyReport(ns, 'hk-kill')).violations).toEqual([]);
  });
});
