// Every way a delivery tool writes a StatefulSet, through the real client against the real API server
// and the webhook: kubectl replace (what Argo CD Replace=true does), server-side apply with and without
// a partition, kubectl patch, and a user's Helm chart through helm upgrade, --force and rollback.
// SPEC §3 row 9. The controller is stopped: these are about admission alone.
import { resolve } from 'node:path';
import { jest } from '@jest/globals';
import { eventually } from '../support/eventually.js';
import { ROOT } from '../support/process.js';
import { statefulSet } from '../support/statefulset.js';
import { admissionOnly, getJson, helm, kubectl, kubectlOk } from './cluster.js';

jest.setTimeout(120_000);

const DENIED = 'admission webhook "statefulsets.phased-rollout.io" denied the request: phased-rollout:';

// These scenarios are about admission alone: no controller may move anything meanwhile.
const scope = admissionOnly('e2e-gitops');
let ns: string;
beforeAll(() => {
  ns = scope.ns();
});

const manifest = (name: string, o: Parameters<typeof statefulSet>[1] = {}) => {
  const m = statefulSet(name, o);
  return { ...m, metadata: { ...m.metadata, namespace: ns } };
};
const get = (name: string) => getJson(['statefulset', name, '-n', ns]);
const partition = async (name: string) => (await get(name)).spec.updateStrategy.rollingUpdate.partition as number;

/** pinnedAt creates `name` with 3 replicas and waits for its pods; the partition is pinned at 3. */
async function pinnedAt(name: string): Promise<void> {
  await kubectlOk(['apply', '-f', '-'], manifest(name));
  await eventually(async () => expect((await get(name)).status.readyReplicas ?? 0).toBe(3), 60_000, 250);
  expect(await partition(name)).toBe(3);
}

describe('GitOps-safe partition ownership (SPEC §3 row 9)', () => {
  it('kubectl replace of the unchanged manifest is allowed and keeps the partition, with a warning', async () => {
    await pinnedAt('rep');
    const r = await kubectl(['replace', '-f', '-'], manifest('rep'));
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Warning: phased-rollout: partition is managed by phased-rollout; kept at 3');
    expect(await partition('rep')).toBe(3);
  });

  it('kubectl replace with a new image is pinned like any new revision', async () => {
    const before = (await get('rep')).status.updateRevision;
    const r = await kubectl(['replace', '-f', '-'], manifest('rep', { image: 'registry.example/app:2' }));
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('change pinned at partition 3');
    expect(await partition('rep')).toBe(3);
    await eventually(async () => expect((await get('rep')).status.updateRevision).not.toBe(before), 20_000, 200);
  });

  it('kubectl replace with an explicit non-zero partition is an edit: denied', async () => {
    const r = await kubectl(['replace', '-f', '-'], manifest('rep', { image: 'registry.example/app:2', partition: 1 }));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${DENIED} partition of StatefulSet ${ns}/rep is managed by phased-rollout (currently 3)`);
  });

  it('kubectl apply --server-side without a partition is allowed; one that moves it to 0 is kept, to another value denied', async () => {
    await pinnedAt('ssa');
    expect((await kubectl(['apply', '--server-side', '-f', '-'], manifest('ssa'))).code).toBe(0);
    expect(await partition('ssa')).toBe(3);
    // The API server reports a PATCH (server-side apply included) with UpdateOptions, like a PUT, so a
    // 0 cannot be told from an omitted field: it is kept, with the warning. The partition never moves.
    const zero = await kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], manifest('ssa', { partition: 0 }));
    expect(zero.code).toBe(0);
    expect(zero.stderr).toContain('partition is managed by phased-rollout; kept at 3');
    expect(await partition('ssa')).toBe(3);
    const moved = await kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], manifest('ssa', { partition: 1 }));
    expect(moved.code).not.toBe(0);
    expect(moved.stderr).toContain(`${DENIED} partition of StatefulSet ${ns}/ssa is managed by phased-rollout (currently 3)`);
    expect(await partition('ssa')).toBe(3);
  });

  it('kubectl patch of the partition is denied (to 0: kept, with the warning)', async () => {
    const json = await kubectl(['patch', 'statefulset', 'ssa', '-n', ns, '--type=json', '-p', '[{"op":"replace","path":"/spec/updateStrategy/rollingUpdate/partition","value":1}]']);
    expect(json.code).not.toBe(0);
    expect(json.stderr).toContain(`${DENIED} partition of StatefulSet ${ns}/ssa is managed by phased-rollout (currently 3)`);
    const merge = await kubectl(['patch', 'statefulset', 'ssa', '-n', ns, '--type=merge', '-p', '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":2}}}}']);
    expect(merge.code).not.toBe(0);
    const zero = await kubectl(['patch', 'statefulset', 'ssa', '-n', ns, '--type=json', '-p', '[{"op":"replace","path":"/spec/updateStrategy/rollingUpdate/partition","value":0}]']);
    expect(zero.stderr).toContain('partition is managed by phased-rollout; kept at 3');
    expect(await partition('ssa')).toBe(3);
  });
});

describe('a user\'s Helm chart with an opted-in StatefulSet', () => {
  const chart = resolve(ROOT, 'test', 'e2e', 'fixtures', 'app-chart');
  const helmOk = async (args: string[]) => {
    const r = await helm([...args, '-n', ns]);
    if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed: ${r.stderr}`);
    return r;
  };
  const revision = async () => (await get('app')).status.updateRevision as string;

  it('helm install pins; helm upgrade, upgrade --force and rollback all keep it pinned', async () => {
    await helmOk(['install', 'app', chart]);
    await eventually(async () => expect((await get('app')).status.readyReplicas ?? 0).toBe(3), 60_000, 250);
    expect(await partition('app')).toBe(3);
    const first = await revision();
    // Unchanged values: a no-op patch.
    await helmOk(['upgrade', 'app', chart]);
    expect(await partition('app')).toBe(3);
    // A new image: a new revision, pinned (row 8).
    await helmOk(['upgrade', 'app', chart, '--set', 'tag=2']);
    await eventually(async () => expect(await revision()).not.toBe(first), 20_000, 200);
    const second = await revision();
    expect(await partition('app')).toBe(3);
    // --force replaces (PUT) the object without a partition: kept (row 9), not denied.
    await helmOk(['upgrade', 'app', chart, '--set', 'tag=2', '--force']);
    expect(await partition('app')).toBe(3);
    expect(await revision()).toBe(second);
    // rollback to release 1: the first template again, pinned; the controller (stopped here) would
    // restore the pods without a gate.
    await helmOk(['rollback', 'app', '1']);
    await eventually(async () => expect(await revision()).toBe(first), 20_000, 200);
    expect(await partition('app')).toBe(3);
    const history = await helmOk(['history', 'app', '-o', 'json']);
    expect((JSON.parse(history.stdout) as { status: string }[]).map((h) => h.status)).toEqual(['superseded', 'superseded', 'superseded', 'superseded', 'deployed']);
  });
});
