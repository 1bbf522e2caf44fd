// Helpers for tests on the real node of hack/real-node.sh: whether there is one, and pods placed on it.
// Without root there is no real node; those tests are skipped with the reason in their names and on
// the console, never counted as passed. .ci/run sets PHASED_ROLLOUT_REQUIRE_REAL_NODE=1, so there a
// missing node fails them instead.
import { it } from '@jest/globals';
import { env } from './cluster.js';
import { Rollout } from './rollout.js';

const REQUIRE = process.env.PHASED_ROLLOUT_REQUIRE_REAL_NODE === '1';

/** realNodeMissing: why there is no real node, or '' when there is one. */
export function realNodeMissing(): string {
  return env().REAL_NODE ? '' : 'no real node in this environment (npm run e2e:up as root makes one)';
}

/** realIt is `it` when a real node exists (or one is required), else `it.skip` with a console note. */
export function realNodeIt(): { realIt: typeof it; skipped: string } {
  const missing = realNodeMissing();
  if (missing && !REQUIRE) {
    console.warn(`real-node tests skipped: ${missing}`);
    return { realIt: it.skip as unknown as typeof it, skipped: ` [skipped: ${missing}]` };
  }
  return { realIt: it, skipped: '' };
}

/** needRealNode throws when the node is required but missing (the first line of each real test). */
export function needRealNode(): { node: string; nodeIp: string; busybox: string; product: string } {
  const e = env();
  const missing = realNodeMissing();
  if (missing) throw new Error(`PHASED_ROLLOUT_REQUIRE_REAL_NODE=1 but ${missing}`);
  return { node: e.REAL_NODE ?? '', nodeIp: e.REAL_NODE_IP ?? '', busybox: e.IMAGE_BUSYBOX ?? '', product: e.IMAGE_PRODUCT ?? '' };
}

/** onRealNode places a pod spec on the real node: its label as nodeSelector, its taint tolerated. */
export function onRealNode<T extends Record<string, unknown>>(podSpec: T): T & { nodeSelector: Record<string, string>; tolerations: unknown[] } {
  return {
    ...podSpec,
    nodeSelector: { 'phased-rollout.io/real-node': 'true' },
    tolerations: [{ key: 'phased-rollout.io/real-node', operator: 'Exists', effect: 'NoSchedule' }],
  };
}

/** realRollout is a Rollout whose pods are real processes on the real node (busybox, a TERM-aware loop). */
export function realRollout(ns: string, name: string, replicas: number, annotations: Record<string, string>): Rollout {
  const { busybox } = needRealNode();
  const r = new Rollout(ns, name, replicas, annotations);
  const spec = r.manifest.spec.template.spec as Record<string, unknown>;
  Object.assign(spec, onRealNode({ terminationGracePeriodSeconds: 2 }));
  r.manifest.spec.template.spec.containers[0] = {
    name: 'app', image: busybox, imagePullPolicy: 'Never',
    command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.5; done'],
    env: [{ name: 'VERSION', value: '1' }],
    readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 },
  };
  return r;
}
/** version rolls a real rollout to a new template (the VERSION variable; the image stays). */
export const version = (r: Rollout, v: string) => r.roll(r.manifest.spec.template.spec.containers[0]!.image as string, (m) => {
  (m.spec.template.spec.containers[0] as { env: { name: string; value: string }[] }).env = [{ name: 'VERSION', value: v }];
});
