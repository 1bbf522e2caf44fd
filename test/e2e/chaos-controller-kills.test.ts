// Chaos: SIGKILL the controller at random moments of a 12-pod gated rollout (some right after a
// partition step), restart it each time, and let the independent safety checker judge every step. A
// short run is part of the end-to-end suite; `npm run test:chaos` makes it 50 kills
// (PHASED_ROLLOUT_CHAOS_KILLS). Bounded: a fixed number of kills, then a bounded wait for completion.
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { statefulSet } from '../support/statefulset.js';
import { chaosSeed, random, reportChaos, violationsText } from './chaos.js';
import { createNamespace, deleteNamespace, env, getJson, harnessProcess, kubectlOk, podRevisions, safetyReport, setGate, waitHttp } from './cluster.js';

const KILLS = Number(process.env.PHASED_ROLLOUT_CHAOS_KILLS ?? 6);
jest.setTimeout(120_000 + KILLS * 8_000);

let ns: string;
beforeAll(async () => {
  ns = await createNamespace('e2e-chaos');
});
afterAll(async () => {
  if (!(await harnessProcess('running', 'controller'))) await harnessProcess('start', 'controller');
  await deleteNamespace(ns);
});

describe('chaos: controller SIGKILLs during a 12-pod rollout', () => {
  it(`survives ${KILLS} kills: the rollout completes and the checker finds no ungated and no double step`, async () => {
    const seed = chaosSeed();
    const rnd = random(seed);
    const name = 'chaos';
    const ann = { [KEYS.enabled]: 'true', [KEYS.query]: `e2e_gate{name="${name}"} == 1`, [KEYS.initialDelaySeconds]: '0', [KEYS.periodSeconds]: '1', [KEYS.successThreshold]: '2' };
    await setGate(name, '1');
    const m = { ...statefulSet(name, { replicas: 12, annotations: ann }), metadata: { name, namespace: ns, annotations: ann } };
    await kubectlOk(['apply', '-f', '-'], m);
    const sts = () => getJson(['statefulset', name, '-n', ns]);
    await eventually(async () => expect((await sts()).status.readyReplicas ?? 0).toBe(12), 90_000, 300);
    m.spec.template.spec.containers[0]!.image = 'registry.example/app:2';
    await kubectlOk(['apply', '-f', '-'], m);

    const partition = async () => (await sts()).spec.updateStrategy.rollingUpdate.partition as number;
    const tally = { kills: 0, rightAfterAStep: 0, atRandom: 0 };
    for (let i = 0; i < KILLS; i++) {
      if (i % 2 === 1) {
        // Wait for a step, then kill at once: the moment right after a partition patch.
        const before = await partition();
        const deadline = Date.now() + 8000;
        while (Date.now() < deadline && (await partition()) === before) await new Promise((r) => setTimeout(r, 30));
        tally.rightAfterAStep++;
      } else {
        await new Promise((r) => setTimeout(r, 300 + rnd() * 3000)); // before, during or after a check
        tally.atRandom++;
      }
      await harnessProcess('kill', 'controller');
      tally.kills++;
      await harnessProcess('start', 'controller');
    }
    await waitHttp(`${env().CONTROLLER_METRICS_URL}/readyz`);
    const rev = (await sts()).status.updateRevision as string;
    await eventually(async () => {
      const s = await sts();
      expect(JSON.parse(s.metadata.annotations[KEYS.status])).toMatchObject({ phase: 'Completed', revision: rev });
      expect(s.spec.updateStrategy.rollingUpdate.partition).toBe(12);
      expect(Object.values(await podRevisions(ns, name)).filter((r) => r === rev)).toHaveLength(12);
    }, 120_000, 500);

    const r = await safetyReport(ns);
    reportChaos({
      scenario: 'controller kills',
      tried: `${tally.kills} SIGKILLs of the controller during a 12-pod rollout (${tally.atRandom} at random moments, ${tally.rightAfterAStep} right after a step), seed ${seed}`,
      survived: `Completed; ${r.lowerings} lowerings, ${r.gatedSteps} gated steps, ${violationsText(r.violations)} (no ungated or double step)`,
      ok: r.violations.length === 0 && r.gatedSteps === 12,
    });
    expect(r.violations.map((v) => `${v.at} ${v.statefulset}: ${v.why}\n  ${v.request}`)).toEqual([]);
    // A 12-pod rollout is 12 steps; the checker saw each one exactly once.
    expect(r.gatedSteps).toBe(12);
    expect(tally.kills).toBe(KILLS);
  });
});
