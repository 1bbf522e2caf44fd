// Real volume snapshots on the real node, for the checkpoint tests: hack/csi.sh builds (once, cached)
// and starts the project's CSI driver, the external-snapshotter and external-provisioner beside the
// node's kubelet. Only the tests that need them start them: other suites never pay for the build.
import { run } from './cluster.js';

let ready: Promise<void> | undefined;

/** csiReady resolves once StorageClass and VolumeSnapshotClass `phased-rollout-csi` work on the real node. */
export function csiReady(): Promise<void> {
  ready ??= (async () => {
    const r = await run('bash', ['hack/csi.sh', 'up'], { timeoutMs: 1_500_000 });
    if (r.code !== 0) throw new Error(`hack/csi.sh up failed (${r.code}):\n${r.stderr.slice(-3000)}`);
    console.log(r.stderr.trim().split('\n').filter((l) => /built|ready/.test(l)).join('\n'));
  })();
  return ready;
}
