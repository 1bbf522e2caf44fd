// The checkpoint's I/O against an API that keeps VolumeSnapshots in memory and answers as the API server
// does (404, 409): what it creates, what it believes, what it tells, what retention deletes. The real
// snapshot controller and CSI driver are in the end-to-end suite (test/e2e/checkpoints.test.ts).
import type { CustomObjectsApi } from '@kubernetes/client-node';
import type { EventRecorder } from '../src/k8s/events.js';
import { snapshotName, type CheckpointRunView } from '../src/checkpoints/snapshots.js';
import { controllerMetrics, createRegistry } from '../src/runtime/metrics.js';
import { quietLog } from '../test/support/quiet-log.js';
import { takeCheckpoint, type CheckpointDeps } from './checkpoints.js';

const T0 = Date.parse('2026-11-28T10:00:00Z');
const t = { namespace: 'db', name: 'pg', uid: 'sts-uid' };
const run = (o: Partial<CheckpointRunView> = {}): CheckpointRunView & { hook: string } => ({ hook: 'snap/checkpoint', key: 'prepare:snap/checkpoint:pg-1/u1@r2@1#1', pod: 'pg-1', ordinal: 1, revision: 'r2', fromRevision: 'r1', timeoutSeconds: 60, checkpoint: { className: 'csi', waitFor: 'creationTime', keep: 1, claims: [{ template: 'data', claim: 'data-pg-1' }] }, ...o });
const apiError = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code, body: JSON.stringify({ message: `status ${code}` }) });

/** An API of VolumeSnapshots and contents in maps; `served` false answers 404 to everything (no CRD). */
function fakeApi(o: { served?: boolean } = {}) {
  const snaps = new Map<string, Record<string, any>>();
  const contents = new Map<string, Record<string, any>>();
  const deleted: string[] = [];
  const api = {
    getNamespacedCustomObject: async (p: { name: string }) => {
      const s = o.served === false ? undefined : snaps.get(p.name);
      if (!s) throw apiError(404);
      return s;
    },
    getClusterCustomObject: async (p: { name: string }) => {
      const c = contents.get(p.name);
      if (!c) throw apiError(404);
      return c;
    },
    createNamespacedCustomObject: async (p: { body: Record<string, any> }) => {
      if (o.served === false) throw apiError(404);
      const name = p.body.metadata.name as string;
      if (snaps.has(name)) throw apiError(409);
      snaps.set(name, { ...p.body, metadata: { ...p.body.metadata, uid: `uid-${name}`, creationTimestamp: new Date(T0).toISOString() } });
      return snaps.get(name);
    },
    listNamespacedCustomObject: async (p: { labelSelector: string }) => {
      const want = Object.fromEntries(p.labelSelector.split(',').map((kv) => kv.split('=')));
      return { items: [...snaps.values()].filter((s) => Object.entries(want).every(([k, v]) => s.metadata.labels?.[k] === v)) };
    },
    deleteNamespacedCustomObject: async (p: { name: string }) => {
      deleted.push(p.name);
      snaps.delete(p.name);
      return {};
    },
  } as unknown as CustomObjectsApi;
  /** cut: the snapshot controller binds a content that names it back (or `owner` instead) and sets the cut. */
  const cut = (name: string, owner = name) => {
    const s = snaps.get(name)!;
    contents.set(`content-${name}`, { metadata: { name: `content-${name}` }, spec: { volumeSnapshotRef: { name: owner, namespace: 'db', uid: s.metadata.uid } } });
    s.status = { boundVolumeSnapshotContentName: `content-${name}`, creationTime: new Date(T0 + 2000).toISOString(), readyToUse: true };
  };
  return { api, snaps, deleted, cut };
}

function deps(objects: CustomObjectsApi | undefined): CheckpointDeps & { reasons: string[]; messages: string[] } {
  const reasons: string[] = [];
  const messages: string[] = [];
  const events = { emit: async (_t: unknown, _type: string, reason: string, message: string) => void (reasons.push(reason), messages.push(message)) } as unknown as EventRecorder;
  return { objects, events, metrics: controllerMetrics(createRegistry()), log: quietLog().log, read: () => ({}), write: () => ({}), reasons, messages };
}

const NAME = snapshotName(run().key, 'data-pg-1');

describe('takeCheckpoint', () => {
  it('creates the snapshot of each claim, labelled, then waits; once cut and bound both ways it passes and tells it', async () => {
    const f = fakeApi();
    const d = deps(f.api);
    expect(await takeCheckpoint(d, t, run(), T0)).toMatchObject({ result: 'running', detail: 'creating VolumeSnapshot of data-pg-1' });
    expect(f.snaps.get(NAME)?.metadata.labels).toMatchObject({ 'phased-rollout.io/statefulset': 'pg', 'phased-rollout.io/pod': 'pg-1', 'phased-rollout.io/to-revision': 'r2' });
    expect(f.snaps.get(NAME)?.spec).toEqual({ volumeSnapshotClassName: 'csi', source: { persistentVolumeClaimName: 'data-pg-1' } });
    expect(await takeCheckpoint(d, t, run(), T0 + 1000)).toMatchObject({ result: 'running' });
    expect(f.snaps.size).toBe(1);
    f.cut(NAME);
    expect(await takeCheckpoint(d, t, run(), T0 + 3000)).toEqual({ key: run().key, result: 'pass', detail: `VolumeSnapshot ${NAME} cut at 2026-11-28T10:00:02.000Z`, snapshots: [NAME] });
    expect(d.reasons).toEqual(['CheckpointTaken']);
    expect(d.messages[0]).toContain(`checkpoint of pod pg-1 before its replacement by revision r2: VolumeSnapshot ${NAME}`);
  });

  it('retention: once cut, the member keeps its newest `keep` rollouts of the controller\'s own; others are left alone', async () => {
    const f = fakeApi();
    const d = deps(f.api);
    const older = run({ key: 'prepare:snap/checkpoint:pg-1/u0@r1@1#0', revision: 'r1' });
    await takeCheckpoint(d, t, older, T0 - 10_000);
    const olderName = snapshotName(older.key, 'data-pg-1');
    f.snaps.get(olderName)!.metadata.creationTimestamp = new Date(T0 - 10_000).toISOString();
    f.snaps.set('hand-made', { metadata: { name: 'hand-made', labels: { 'phased-rollout.io/statefulset': 'pg', 'phased-rollout.io/pod': 'pg-1', 'phased-rollout.io/to-revision': 'r0' } } });
    await takeCheckpoint(d, t, run(), T0);
    f.cut(NAME);
    expect((await takeCheckpoint(d, t, run(), T0 + 3000)).result).toBe('pass');
    expect(f.deleted).toEqual([olderName]);
    expect(f.snaps.has('hand-made')).toBe(true);
  });

  it('a content that names another snapshot: failed, told, never believed', async () => {
    const f = fakeApi();
    const d = deps(f.api);
    await takeCheckpoint(d, t, run(), T0);
    f.cut(NAME, 'someone-else');
    expect(await takeCheckpoint(d, t, run(), T0 + 3000)).toMatchObject({ result: 'fail', detail: expect.stringContaining('which belongs to db/someone-else') });
    expect(d.reasons).toEqual(['CheckpointFailed']);
  });

  it('never cut within the timeout: an error, with the wait it did', async () => {
    const f = fakeApi();
    const d = deps(f.api);
    await takeCheckpoint(d, t, run(), T0);
    expect(await takeCheckpoint(d, t, run(), T0 + 61_000)).toMatchObject({ result: 'error', detail: `checkpoint of pod pg-1 not cut within 60s: ${NAME} (not bound to a content yet)` });
    expect(d.reasons).toEqual(['CheckpointFailed']);
  });

  it('the API not served (no CRDs): an error that says what to install', async () => {
    const d = deps(fakeApi({ served: false }).api);
    expect(await takeCheckpoint(d, t, run(), T0)).toMatchObject({ result: 'error', detail: expect.stringContaining('the VolumeSnapshot API (snapshot.storage.k8s.io/v1) is not served') });
  });

  it('no client: an error, not a pass', async () => {
    expect(await takeCheckpoint(deps(undefined), t, run(), T0)).toMatchObject({ result: 'error' });
  });
});
