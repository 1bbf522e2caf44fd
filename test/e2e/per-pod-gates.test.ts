// Per-pod and named gates on the real cluster: a query naming the pod at the partition passes for one
// pod and fails for the next, beside a service-wide named gate; the webhook refuses a placeholder that
// would be PromQL syntax rather than a label value.
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { createNamespace, deleteNamespace, kubectl, podRevisions, safetyReport, setGate } from './cluster.js';
import { fastGate, Rollout } from './rollout.js';

jest.setTimeout(180_000);

let ns: string;
beforeAll(async () => {
  ns = await createNamespace('e2e-gates');
});
afterAll(async () => {
  await deleteNamespace(ns);
});

describe('per-pod gates', () => {
  it('judges each pod as it rolls: pod 2 passes, pod 1 fails, and the rollout stops there naming the gate', async () => {
    const g = `${ns}-pod`;
    const ann = fastGate('unused', {
      [KEYS.query]: `e2e_gate{name="${g}-{{ordinal}}"} == 1`,
      [`${KEYS.query}.service`]: `e2e_gate{name="${ns}-svc"} == 1`,
      [KEYS.failureThreshold]: '3',
    });
    const sts = new Rollout(ns, 'perpod', 3, ann);
    await Promise.all([setGate(`${ns}-svc`, '1'), setGate(`${g}-2`, '1'), setGate(`${g}-1`, '0')]);
    await sts.create();
    const rev = await sts.roll('registry.example/app:2');
    await eventually(async () => expect(await sts.status()).toMatchObject({ phase: 'Failed', revision: rev, partition: 1 }), 90_000, 300);
    const status = await sts.status();
    expect(status?.message).toContain('gate failed 3 times in a row at partition 1 (query: ');
    const pods = await podRevisions(ns, sts.name);
    expect(pods['perpod-2']).toBe(rev);
    expect(pods['perpod-1']).toBe(rev);
    expect(pods['perpod-0']).not.toBe(rev);
    // The independent checker reads the same rule from docs/rollouts.md: each step's pod gate and the service gate passed.
    const safety = await safetyReport(ns, sts.name);
    expect(safety.violations).toEqual([]);
    expect(safety).toMatchObject({ lowerings: 2, gatedSteps: 2 });
  });

  it('the webhook denies a placeholder outside a label value, and an unknown one, with what is allowed', async () => {
    const bad = new Rollout(ns, 'badquery', 1, fastGate('badquery', { [KEYS.query]: 'up{pod={{pod}}} == 1', [`${KEYS.query}.x`]: 'up{pod="{{node}}"}' }));
    const r = await kubectl(['apply', '-f', '-'], bad.manifest);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('placeholder {{pod}} must stand inside a "..." label value');
    expect(r.stderr).toContain('unknown placeholder {{node}}');
  });
});
