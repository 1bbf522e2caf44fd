// Real volume snapshots on the real node, for the checkpoint tests: hack/csi.sh builds (once, cached)
// and starts the project's CSI driver, the external-snapshotter and external-provisioner beside the
// node's kubelet. Only the tests that need them start them: other suites never pay for the build.
import { createNamespace, deleteNamespace, kubectl, run } from './cluster.js';
import type { Rollout } from './rollout.js';

/** CSI_CLASS names the StorageClass and the VolumeSnapshotClass hack/csi.sh makes for the driver. */
export const CSI_CLASS = 'phased-rollout-csi';

/** How long `hack/csi.sh up` may take: a cold build of the CSI parts took 9 to 13 min here, more on a busy machine. */
const UP_MS = 1_500_000;

let ready: Promise<void> | undefined;

/** csiReady resolves once StorageClass and VolumeSnapshotClass `phased-rollout-csi` work on the real node. */
export function csiReady(): Promise<void> {
  ready ??= (async () => {
    const r = await run('bash', ['hack/csi.sh', 'up'], { timeoutMs: UP_MS });
    if (r.code !== 0) throw new Error(`hack/csi.sh up failed (${r.code}):\n${r.stderr.slice(-3000)}`);
    console.log(r.stderr.trim().split('\n').filter((l) => /built|ready/.test(l)).join('\n'));
  })();
  return ready;
}

/**
 * csiSuite registers the hooks of a test file on real volume snapshots: the CSI parts up (csiReady,
 * the hook allowed its whole bound and a minute more) and a fresh namespace, deleted after. A suite
 * `skipped` (realNodeIt's: no real node) does neither. Returns the namespace's name (set once the
 * hooks ran).
 */
export function csiSuite(prefix: string, skipped: string): { ns: () => string } {
  let ns = '';
  beforeAll(async () => {
    if (skipped) return;
    await csiReady();
    ns = await createNamespace(prefix);
  }, UP_MS + 60_000);
  afterAll(async () => {
    if (ns) await deleteNamespace(ns);
  });
  return { ns: () => ns };
}

/**
 * withData gives a real rollout a claim per member on the CSI class: each start of its container appends
 * "<VERSION> <pod UID>" to /data/log, so a member's log says which releases ran on its data.
 */
export function withData(r: Rollout): Rollout {
  const spec = r.manifest.spec as Record<string, any>;
  spec.volumeClaimTemplates = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: CSI_CLASS, resources: { requests: { storage: '64Mi' } } } }];
  const c = spec.template.spec.containers[0];
  c.command = ['sh', '-c', 'echo "$VERSION $POD_UID" >> /data/log; trap "exit 0" TERM; while true; do sleep 0.5; done'];
  c.env = [...(c.env ?? []), { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } }];
  c.volumeMounts = [{ name: 'data', mountPath: '/data' }];
  return r;
}

/** dataLog: the releases that started on a member's data (withData's /data/log), oldest first; empty while the pod cannot be reached. */
export async function dataLog(ns: string, pod: string): Promise<string[]> {
  const r = await kubectl(['exec', '-n', ns, pod, '--', 'cat', '/data/log']);
  return r.code === 0 ? r.stdout.trim().split('\n').map((l) => l.split(' ')[0] ?? '') : [];
}
