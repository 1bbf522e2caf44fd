// Judging a release on the real cluster (kube-apiserver, the StatefulSet controller, kwok pods, the
// real Prometheus scraping the gate exporter, the controller and webhook processes): a comparison gate
// of the new revision against the old, inconclusive checks that pause for a person and `kubectl
// phased-rollout promote`, a dry-run gate that is recorded and never enforced, and error-limit.
// The exporter's series e2e_gate{name="err-<namespace>-<revision>"} stands for an error rate per
// revision (what a relabelled controller_revision_hash label gives in a real cluster); the namespace
// keeps a run from reading an earlier run's values (revision names depend on the template only).
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { createNamespace, deleteNamespace, env, getJson, kubectl, kubectlOk, safetyReport, setGate } from './cluster.js';
import { fastGate, Rollout } from './rollout.js';

jest.setTimeout(240_000);

const CMP = 'phased-rollout.io/compare.errors';

let ns: string;
beforeAll(async () => {
  ns = await createNamespace('e2e-analysis');
});
afterAll(async () => {
  await deleteNamespace(ns);
});

/** events lists the reasons and messages of the Events of one StatefulSet. */
async function events(name: string): Promise<{ reason: string; message: string }[]> {
  const list = await getJson<{ items: { reason: string; message: string; involvedObject: { name: string } }[] }>(['events', '-n', ns]);
  return list.items.filter((e) => e.involvedObject.name === name);
}

/** lowestPartition watches a StatefulSet for `ms` and returns the lowest partition seen while it rolled `revision`. */
async function lowestPartition(sts: Rollout, revision: string, ms: number): Promise<number> {
  let lowest = await sts.partition();
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const s = await sts.get();
    if (s.status.updateRevision === revision) lowest = Math.min(lowest, s.spec.updateStrategy.rollingUpdate.partition as number);
    await new Promise((r) => setTimeout(r, 200));
  }
  return lowest;
}

describe('comparison gate: the new revision against the old, per step', () => {
  it('rolls a revision no worse than the old to Completed; rolls back one that is worse, before its second pod', async () => {
    const sts = new Rollout(ns, 'cmp', 3, fastGate('cmp', { [CMP]: 'e2e_gate{name="err-{{namespace}}-{{revision}}"}', [`${CMP}.criteria`]: 'max-ratio=1.5 max-delta=0.01', [KEYS.failureThreshold]: '2', [KEYS.onFailure]: 'rollback' }));
    await sts.create();
    const r1 = (await sts.get()).status.updateRevision as string;
    await setGate(`err-${ns}-${r1}`, '0.1');
    const r2 = await sts.roll('registry.example/app:2');
    await setGate(`err-${ns}-${r2}`, '0.12'); // worse by 20 %: within max-ratio 1.5
    await sts.completed(r2);
    const done = await sts.status();
    // The first step was judged by the query gate alone (no new pod yet); the next ones compared.
    expect(done?.history?.['compare.errors']?.at(-1)).toMatchObject({ result: 'pass', value: 'new 0.12 old 0.1' });
    expect(done?.history?.query?.at(-1)).toMatchObject({ result: 'pass' });
    // kubectl phased-rollout status NAME shows the measurements.
    const shown = await kubectl(['phased-rollout', 'status', 'cmp', '-n', ns]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/GATE\s+RESULT\s+IN A ROW\s+VALUE\s+LAST/);
    expect(shown.stdout).toMatch(/compare\.errors\s+pass\s+\d+\s+new 0\.12 old 0\.1/);

    // Revision 3 doubles the error rate of revision 2 (now the known-good one).
    const r3 = await sts.roll('registry.example/app:3');
    await setGate(`err-${ns}-${r3}`, '0.3');
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'RolledBack', failedRevision: r3, failureReason: 'FailureThreshold' }), 90_000, 500);
    const told = await events('cmp');
    expect(told.map((e) => e.message).join('\n')).toMatch(/compare\.errors: worse: new 0\.3 vs old 0\.12/);
    // One pod rolled (the first step, the query gate passing), the comparison stopped the second.
    expect(told.filter((e) => e.reason === 'PartitionLowered' && e.message.includes(`of revision ${r3}`)).map((e) => e.message.split(' after')[0])).toEqual(['partition 3 -> 2']);
    expect((await safetyReport(ns, 'cmp')).violations).toEqual([]);
  });
});

describe('inconclusive checks pause the rollout for a person', () => {
  it('too few values to compare, inconclusive-limit times in a row: Paused (Inconclusive); promote takes the step', async () => {
    const sts = new Rollout(ns, 'inc', 3, fastGate('inc', { [CMP]: 'e2e_gate{name="err-{{namespace}}-{{revision}}"}', [KEYS.inconclusiveLimit]: '2' }));
    await sts.create();
    const r1 = (await sts.get()).status.updateRevision as string;
    await setGate(`err-${ns}-${r1}`, '0.1');
    const r2 = await sts.roll('registry.example/app:2');
    // No series for the new revision: nothing to compare.
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'Paused', reason: 'Inconclusive', partition: 2, revision: r2 }), 60_000, 300);
    const held = await sts.status();
    expect(held?.message).toMatch(/^paused: 2 inconclusive checks in a row at partition 2 \(compare\.errors: too few values to compare: new 0, old 1/);
    expect((await events('inc')).map((e) => e.reason)).toEqual(expect.arrayContaining(['CheckInconclusive', 'RolloutInconclusive']));
    // Held: nothing moves while nobody acts, whatever the time.
    expect(await lowestPartition(sts, r2, 3000)).toBe(2);
    // The new revision measured from now on (the hold runs no gate meanwhile, so nothing moves); the
    // next checks, at partition 1, have values on both sides once Prometheus scraped them.
    await setGate(`err-${ns}-${r2}`, '0.1');
    await new Promise((r) => setTimeout(r, 2500));
    expect(await sts.partition()).toBe(2);
    // A person looks, decides, promotes.
    const promoted = await kubectl(['phased-rollout', 'promote', 'inc', '-n', ns]);
    expect(promoted).toMatchObject({ code: 0, stdout: 'statefulset.apps/inc promoted\n' });
    expect((await sts.get()).metadata.annotations[KEYS.promote]).toBe(`${r2}@2@${held?.hold}`);
    expect(await sts.nextStep(2, 30_000)).toBe(true);
    expect((await events('inc')).some((e) => e.reason === 'PartitionLowered' && e.message.includes('after promotion by a user after inconclusive checks'))).toBe(true);
    // With the new revision measured, the comparison decides again and the rollout completes.
    await sts.completed(r2);
    expect((await sts.status())?.history?.['compare.errors']?.at(-1)).toMatchObject({ result: 'pass', value: 'new 0.1 old 0.1' });
    expect((await safetyReport(ns, 'inc')).violations).toEqual([]);
  });
});

describe('dry-run gates', () => {
  it('a failing dry-run gate is recorded (status history, Event, metric) and never blocks the rollout', async () => {
    await setGate('candidate', '0');
    const sts = new Rollout(ns, 'dry', 3, fastGate('dry', { [`${KEYS.query}.candidate`]: 'e2e_gate{name="candidate"} == 1', [KEYS.dryRun]: 'query.candidate' }));
    await sts.create();
    const r2 = await sts.roll('registry.example/app:2');
    await sts.completed(r2);
    const st = await sts.status();
    expect(st?.history?.['query.candidate']).toEqual([expect.objectContaining({ result: 'fail', dryRun: true, value: 'no samples' })]);
    expect(st?.history?.['query.candidate']?.[0]?.count).toBeGreaterThanOrEqual(2);
    const told = (await events('dry')).filter((e) => e.reason === 'DryRunCheckFailed');
    expect(told[0]?.message).toMatch(/^dry-run gate query\.candidate failed \(not enforced\): query returned no samples/);
    const metrics = await (await fetch(`${env().CONTROLLER_METRICS_URL}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`phased_rollout_gate_results_total\\{namespace="${ns}",statefulset="dry",gate="query.candidate",result="fail",dry_run="true"\\} [1-9]`));
    // The checker judges the enforced gate only, and finds every step gated.
    const safety = await safetyReport(ns, 'dry');
    expect(safety.violations).toEqual([]);
    expect(safety.gatedSteps).toBeGreaterThanOrEqual(3);
  });
});

describe('error-limit', () => {
  it('gates that cannot be evaluated error-limit times in a row fail the rollout; by default they hold it', async () => {
    // A query Prometheus refuses (bad_data): an error, not a fail, on every check.
    const broken = { [KEYS.query]: 'sum(e2e_gate{name="lim"}' };
    const held = new Rollout(ns, 'hold', 2, fastGate('hold', broken));
    const limited = new Rollout(ns, 'lim', 2, fastGate('lim', { ...broken, [KEYS.errorLimit]: '3' }));
    for (const s of [held, limited]) {
      await kubectlOk(['apply', '-f', '-'], s.manifest);
      await eventually(async () => expect((await s.get()).status.readyReplicas ?? 0).toBe(2), 60_000, 300);
    }
    await Promise.all([held.roll('registry.example/app:2'), limited.roll('registry.example/app:2')]);
    await eventually(async () => expect(await limited.status()).toMatchObject({ phase: 'Failed' }), 60_000, 300);
    expect((await limited.status())?.history?.query).toEqual([expect.objectContaining({ result: 'error', count: 3 })]);
    expect((await limited.status())?.message).toMatch(/^gates could not be evaluated 3 times in a row at partition 2 \(error-limit; HTTP 400, bad_data/);
    expect(await limited.partition()).toBe(2);
    // Without error-limit an outage holds: still checking, nothing moved, not failed.
    expect(await held.status()).toMatchObject({ phase: 'Checking', gate: 'error' });
    expect(await held.partition()).toBe(2);
  });
});
