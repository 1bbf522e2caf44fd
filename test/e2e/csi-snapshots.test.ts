// The test infrastructure's volume snapshots on the real node, on their own (hack/csi.sh: the project's
// CSI driver, csi-provisioner, csi-snapshotter, snapshot-controller), before any product feature uses
// them: a claim on StorageClass phased-rollout-csi is provisioned and mounted in a real pod, a
// VolumeSnapshot of it is a consistent cut taken while the pod writes, and a claim made from the
// snapshot holds what was written before the cut and nothing after. It starts the parts itself
// (csiReady: built once, cached), so it runs from a fresh clone and inside the full suite alike.
import { jest } from '@jest/globals';
import { eventually } from '../support/eventually.js';
import { getJson, kubectl, kubectlOk } from './cluster.js';
import { CSI_CLASS, csiSuite } from './csi.js';
import { needRealNode, onRealNode, realNodeIt } from './real-node.js';

jest.setTimeout(300_000);
const { realIt, skipped } = realNodeIt();
const scope = csiSuite('e2e-csi', skipped);
let ns = '';
beforeAll(() => {
  ns = scope.ns();
});

const claim = (name: string, size: string, snapshot?: string) => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: ns },
  spec: {
    accessModes: ['ReadWriteOnce'], storageClassName: CSI_CLASS, resources: { requests: { storage: size } },
    ...(snapshot ? { dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: snapshot } } : {}),
  },
});

/** pod runs `script` on the real node with `claimName` at /data, then stays (the volume stays mounted). */
const pod = (name: string, claimName: string, script: string) => {
  const { busybox } = needRealNode();
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns },
    spec: onRealNode({
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: busybox, imagePullPolicy: 'Never', command: ['sh', '-c', `${script} && touch /tmp/ready; trap "exit 0" TERM; while true; do sleep 0.5; done`], volumeMounts: [{ name: 'data', mountPath: '/data' }], readinessProbe: { exec: { command: ['test', '-e', '/tmp/ready'] }, periodSeconds: 1 } }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
    }),
  };
};

const sh = async (name: string, script: string) => kubectl(['exec', '-n', ns, name, '--', 'sh', '-c', script]);
const ready = (name: string) => kubectlOk(['wait', '-n', ns, '--for=condition=Ready', `pod/${name}`, '--timeout=120s']);

describe(`CSI volume snapshots on the real node${skipped}`, () => {
  realIt('a snapshot of a mounted 64 MiB volume is a cut: a claim made from it has the writes of before, none of after, at the size asked for', async () => {
    needRealNode();
    await kubectlOk(['apply', '-f', '-'], claim('data', '64Mi'));
    // 48 MiB of data that does not compress or sparsify: the snapshot copies real blocks.
    await kubectlOk(['apply', '-f', '-'], pod('writer', 'data', 'echo one > /data/first && dd if=/dev/urandom of=/data/fill bs=1M count=48 2>/dev/null && sync'));
    await ready('writer');

    const asked = Date.now();
    await kubectlOk(['apply', '-f', '-'], { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: 'cut', namespace: ns }, spec: { volumeSnapshotClassName: CSI_CLASS, source: { persistentVolumeClaimName: 'data' } } });
    const snap = await eventually(async () => {
      const s = await getJson(['volumesnapshot', 'cut', '-n', ns]);
      expect(s.status?.readyToUse).toBe(true);
      return s;
    }, 120_000, 100);
    const readyIn = Date.now() - asked;
    // The cut (the driver's freeze) lies between the request and readiness; the size is the claim's.
    const cut = Date.parse(snap.status.creationTime);
    expect(cut).toBeGreaterThanOrEqual(Math.floor(asked / 1000) * 1000);
    expect(cut).toBeLessThanOrEqual(Date.now());
    expect(snap.status.restoreSize).toBe('64Mi');
    console.log(`csi: a snapshot of a 64 MiB volume holding 48 MiB, mounted, ready ${readyIn} ms after it was asked for (driver's own time: CreateSnapshot in .e2e/logs/csi-driver.log)`);

    // After the cut: the writer goes on, its filesystem thawed.
    expect((await sh('writer', 'echo two > /data/second && sync')).code).toBe(0);

    await kubectlOk(['apply', '-f', '-'], claim('restored', '128Mi', 'cut'));
    await kubectlOk(['apply', '-f', '-'], pod('reader', 'restored', 'true'));
    await ready('reader');
    expect((await kubectlOk(['exec', '-n', ns, 'reader', '--', 'cat', '/data/first'])).stdout.trim()).toBe('one');
    expect((await sh('reader', 'test -e /data/second')).code).not.toBe(0);
    expect((await sh('reader', 'test "$(wc -c < /data/fill)" = 50331648')).code).toBe(0);
    // Grown to the size asked for: the image and its filesystem (df: 1 KiB blocks).
    const size = Number((await kubectlOk(['exec', '-n', ns, 'reader', '--', 'sh', '-c', "df -k /data | awk 'NR == 2 {print $2}'"])).stdout.trim());
    expect(size).toBeGreaterThan(100 * 1024);
    expect((await getJson(['pvc', 'restored', '-n', ns])).status.capacity.storage).toBe('128Mi');

    // Everything goes: the pods unmount, the claims' volumes and the snapshot's content are deleted.
    const pvs = await Promise.all(['data', 'restored'].map(async (c) => (await getJson(['pvc', c, '-n', ns])).spec.volumeName as string));
    const content = snap.status.boundVolumeSnapshotContentName as string;
    await kubectlOk(['delete', '-n', ns, 'pod/writer', 'pod/reader', '--wait=true']);
    await kubectlOk(['delete', '-n', ns, 'volumesnapshot/cut', 'pvc/data', 'pvc/restored', '--wait=true']);
    await eventually(async () => {
      for (const name of [...pvs.map((p) => `pv/${p}`), `volumesnapshotcontent/${content}`]) expect((await kubectl(['get', name])).code).not.toBe(0);
    }, 60_000, 500);
  });
});
