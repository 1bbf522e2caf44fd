// Job gates on the real node: a RolloutGate whose `jobs` run real Jobs (busybox) next to the
// StatefulSet's real pods, under the controller's shipped RBAC. Beside each Job gate stands the usual
// Prometheus gate, so the safety checker can judge every step as in the other suites.
//
// On it: one Job per step, owned and labelled, never two at once, the outcome in the status history; a
// failing Job rolls back; a Job past its timeout is an error (error-limit fails the rollout); a
// controller killed while a Job runs: the restarted one waits for that Job, never starts a second beside
// it, and then runs the step's Job itself (only a Job whose UID this process created answers a gate).
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { createNamespace, deleteNamespace, getJson, harnessProcess, kubectlOk, podRevisions, safetyReport, setGate } from './cluster.js';
import { needRealNode, onRealNode, realNodeIt, realRollout, version } from './real-node.js';
import { fastGate } from './rollout.js';

jest.setTimeout(240_000);
const { realIt, skipped } = realNodeIt();

let ns = '';
beforeAll(async () => {
  if (skipped) return;
  ns = await createNamespace('e2e-jobs');
});
afterAll(async () => {
  if (ns) await deleteNamespace(ns);
});

/** A RolloutGate with one Job gate whose container runs `script` (sh) on the real node. */
const jobPolicy = (name: string, script: string, extra: Record<string, unknown> = {}, timing: Record<string, unknown> = {}) => ({
  apiVersion: 'phased-rollout.io/v1alpha1',
  kind: 'RolloutGate',
  metadata: { name, namespace: ns },
  spec: {
    jobs: [
      {
        name: 'smoke',
        ...extra,
        template: {
          metadata: { labels: { purpose: 'smoke-test' } },
          spec: { template: { spec: onRealNode({ terminationGracePeriodSeconds: 1, containers: [{ name: 'check', image: needRealNode().busybox, imagePullPolicy: 'Never', command: ['sh', '-c', script] }] }) } },
        },
      },
    ],
    ...timing,
  },
});

type Job = { metadata: { name: string; uid: string; creationTimestamp: string; labels: Record<string, string>; annotations: Record<string, string>; ownerReferences: { uid: string; kind: string }[] }; spec: Record<string, any>; status: { completionTime?: string; conditions?: { type: string; status: string; lastTransitionTime: string }[] } };
const jobsOf = async (sts: string) => (await getJson<{ items: Job[] }>(['jobs', '-n', ns, '-l', `phased-rollout.io/statefulset=${sts}`])).items;
const finishedAt = (j: Job) => Date.parse(j.status.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')?.lastTransitionTime ?? '');

describe(`Job gates on the real node${skipped}`, () => {
  realIt('one Job per step, owned and labelled, one at a time; the StatefulSet rolls to Completed with its outcomes in the history', async () => {
    await kubectlOk(['apply', '-f', '-'], jobPolicy('smoke', 'echo "judging $PHASED_ROLLOUT_POD at partition $PHASED_ROLLOUT_PARTITION"; test -n "$PHASED_ROLLOUT_REVISION"'));
    await setGate('jg', '1');
    const sts = realRollout(ns, 'jg', 3, fastGate('jg', { [KEYS.gates]: 'smoke', [KEYS.successThreshold]: '1' }));
    await sts.create();
    const uid = (await sts.get()).metadata.uid as string;
    const rev = await version(sts, '2');
    await sts.completed(rev, 180_000);
    const jobs = (await jobsOf('jg')).filter((j) => j.metadata.annotations['phased-rollout.io/revision'] === rev);
    // A check at every partition, the final one (0) included; each step ran its Job once.
    expect(jobs.map((j) => Number(j.metadata.annotations['phased-rollout.io/partition'])).sort()).toEqual([0, 1, 2, 3]);
    for (const j of jobs) {
      expect(j.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'StatefulSet', uid })]);
      expect(j.metadata.labels).toMatchObject({ purpose: 'smoke-test', 'app.kubernetes.io/managed-by': 'phased-rollout' });
      expect(j.metadata.annotations).toMatchObject({ 'phased-rollout.io/gate': 'smoke/job.smoke', 'phased-rollout.io/run': '1' });
      expect(j.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 3600 });
      expect(j.status.conditions?.some((c) => c.type === 'Complete' && c.status === 'True')).toBe(true);
    }
    // Never two at once: each Job was created after the one before it finished (seconds in the API).
    const ordered = [...jobs].sort((a, b) => Date.parse(a.metadata.creationTimestamp) - Date.parse(b.metadata.creationTimestamp));
    for (let i = 1; i < ordered.length; i++) expect(Date.parse(ordered[i]!.metadata.creationTimestamp)).toBeGreaterThanOrEqual(finishedAt(ordered[i - 1]!));
    const first = ordered[0]!.metadata.name;
    const logs = await kubectlOk(['logs', '-n', ns, `job/${ordered[1]!.metadata.name}`]);
    expect(logs.stdout).toContain('judging jg-2 at partition 2');
    expect((await sts.status())?.history?.['smoke/job.smoke']?.at(-1)).toMatchObject({ result: 'pass', value: 'Complete' });
    const events = await getJson<{ items: { reason: string; message: string; involvedObject: { name: string } }[] }>(['events', '-n', ns]);
    expect(events.items.filter((e) => e.involvedObject.name === 'jg' && e.reason === 'JobCheckStarted').map((e) => e.message)).toEqual(expect.arrayContaining([expect.stringContaining(`started Job ${first} for gate smoke/job.smoke`)]));
    const safety = await safetyReport(ns, 'jg');
    expect(safety.violations).toEqual([]);
    expect(safety.gatedSteps).toBe(3);
  });

  realIt('a failing Job rolls the real pods back; a Job past its timeout is an error, and error-limit fails the rollout', async () => {
    await kubectlOk(['apply', '-f', '-'], jobPolicy('broken', 'echo "data check: 3 rows lost" >&2; exit 3', {}, { failureThreshold: 1 }));
    await setGate('jg-fail', '1');
    const sts = realRollout(ns, 'jg-fail', 2, fastGate('jg-fail', { [KEYS.gates]: 'broken', [KEYS.onFailure]: 'rollback' }));
    await sts.create();
    const old = (await sts.get()).status.updateRevision as string;
    const bad = await version(sts, 'bad');
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'RolledBack', failedRevision: bad }), 120_000, 500);
    // The status now speaks of the revision put back; the Event says what the Job said.
    const events = await getJson<{ items: { reason: string; message: string; involvedObject: { name: string } }[] }>(['events', '-n', ns]);
    const failed = events.items.filter((e) => e.involvedObject.name === 'jg-fail' && e.reason === 'CheckFailed').map((e) => e.message);
    expect(failed).toEqual([expect.stringMatching(/broken\/job\.smoke: Job jg-fail-check-[0-9a-f]{10} failed \(BackoffLimitExceeded.*kubectl logs -n \S+ job\/jg-fail-check-/)]);
    const job = failed[0]!.match(/job\/(jg-fail-check-[0-9a-f]{10})/)![1]!;
    expect((await kubectlOk(['logs', '-n', ns, `job/${job}`])).stderr + (await kubectlOk(['logs', '-n', ns, `job/${job}`])).stdout).toContain('data check: 3 rows lost');
    await eventually(async () => expect(Object.values(await podRevisions(ns, 'jg-fail'))).toEqual([old, old]), 120_000, 500);
    expect((await safetyReport(ns, 'jg-fail')).violations).toEqual([]);

    await kubectlOk(['apply', '-f', '-'], jobPolicy('slow', 'sleep 60', { timeoutSeconds: 2 }, { errorLimit: 1 }));
    await setGate('jg-slow', '1');
    const slow = realRollout(ns, 'jg-slow', 2, fastGate('jg-slow', { [KEYS.gates]: 'slow' }));
    await slow.create();
    await version(slow, '2');
    await eventually(async () => expect(await slow.status()).toMatchObject({ phase: 'Failed', message: expect.stringMatching(/^gates could not be evaluated 1 times in a row .*Job jg-slow-check-[0-9a-f]{10} timed out/) }), 120_000, 500);
    expect(await slow.partition()).toBe(2);
    expect((await slow.status())?.history?.['slow/job.smoke']?.at(-1)).toMatchObject({ result: 'error', value: 'DeadlineExceeded' });
  });

  realIt('the controller killed while a Job runs: the restarted one waits for that Job, starts no second beside it, then runs its own', async () => {
    await kubectlOk(['apply', '-f', '-'], jobPolicy('long', 'sleep 8'));
    await setGate('jg-kill', '1');
    const sts = realRollout(ns, 'jg-kill', 2, fastGate('jg-kill', { [KEYS.gates]: 'long', [KEYS.successThreshold]: '1' }));
    await sts.create();
    const rev = await version(sts, '2');
    const running = await eventually(async () => {
      const js = await jobsOf('jg-kill');
      expect(js.filter((j) => j.metadata.annotations['phased-rollout.io/revision'] === rev)).toHaveLength(1);
      return js[0]!;
    }, 60_000, 250);
    await harnessProcess('kill', 'controller');
    await new Promise((r) => setTimeout(r, 1000));
    await harnessProcess('start', 'controller');
    await sts.completed(rev, 180_000);
    const jobs = (await jobsOf('jg-kill')).filter((j) => j.metadata.annotations['phased-rollout.io/revision'] === rev);
    // The Job running at the kill was waited for, not believed: the restarted process cannot tell it from
    // a copy someone else made, so its partition ran a second Job (run 2), after the first finished.
    const killed = jobs.find((j) => j.metadata.uid === running.metadata.uid)!;
    const at = killed.metadata.annotations['phased-rollout.io/partition']!;
    expect(jobs.map((j) => j.metadata.annotations['phased-rollout.io/partition']).sort()).toEqual(['0', '1', '2', at].sort());
    const again = jobs.filter((j) => j.metadata.annotations['phased-rollout.io/partition'] === at && j !== killed);
    expect(again.map((j) => j.metadata.annotations['phased-rollout.io/run'])).toEqual(['2']);
    expect(Date.parse(again[0]!.metadata.creationTimestamp)).toBeGreaterThanOrEqual(finishedAt(killed));
    expect(jobs.filter((j) => j.metadata.annotations['phased-rollout.io/partition'] !== at).map((j) => j.metadata.annotations['phased-rollout.io/run'])).toEqual(['1', '1']);
    expect((await safetyReport(ns, 'jg-kill')).violations).toEqual([]);
  });
});
