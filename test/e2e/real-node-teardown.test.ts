// `hack/real-node.sh down` (what `npm run e2e:down` runs first) removes everything the real node made
// on this machine: processes, containers and their shims, mounts, network namespaces, the bridge and its
// veths, iptables rules and chains, the sysctls it changed, its folder. The test takes the node down
// with pods running on it, asks `real-node.sh leftovers` (which looks at /proc, /proc/mounts, ip link,
// iptables and ip6tables) and then brings the node back for the suites after it.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { jest } from '@jest/globals';
import { eventually } from '../support/eventually.js';
import { ROOT } from '../support/process.js';
import { createNamespace, deleteNamespace, env, getJson, harnessProcess, kubectlOk, run } from './cluster.js';
import { needRealNode, onRealNode, realNodeIt } from './real-node.js';

jest.setTimeout(240_000);
const { realIt, skipped } = realNodeIt();
const script = resolve(ROOT, 'hack', 'real-node.sh');

describe(`the real node's teardown${skipped}`, () => {
  realIt.each([
    ['with pods running', false],
    // The containers' processes outlive a dead runtime (they are reparented): down finds them in kubelet's cgroups.
    ['after containerd and its shims were killed first', true],
  ])('leaves nothing behind, %s, and the node comes back', async (_case, killRuntime) => {
    const { busybox, node } = needRealNode();
    const e = env();
    const ns = await createNamespace('e2e-teardown');
    try {
      // Two running pods: sandboxes, veths, overlay mounts, a projected token volume each.
      for (const name of ['a', 'b']) {
        await kubectlOk(['apply', '-n', ns, '-f', '-'], {
          apiVersion: 'v1', kind: 'Pod', metadata: { name },
          spec: onRealNode({ terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: busybox, imagePullPolicy: 'Never', command: ['sleep', '600'] }] }),
        });
      }
      await eventually(async () => {
        for (const name of ['a', 'b']) expect((await getJson(['pod', name, '-n', ns])).status.phase).toBe('Running');
      }, 60_000, 250);
      const before = await run('bash', [script, 'leftovers']);
      expect(before.stdout).toMatch(/process containerd/);
      expect(before.stdout).toMatch(/mount /);
      if (killRuntime) {
        const shims = (await run('bash', [resolve(ROOT, 'hack', 'node', 'runtime.sh'), 'shims'])).stdout.split('\n').filter(Boolean);
        expect(shims.length).toBeGreaterThanOrEqual(2);
        await harnessProcess('kill', 'containerd');
        for (const pid of shims) process.kill(Number(pid), 'SIGKILL');
        // The pods' `sleep 600` still runs, orphaned, in kubelet's cgroups.
        expect((await run('bash', [script, 'leftovers'])).stdout).toMatch(/^processes in \/sys\/fs\/cgroup\/pids\/kubepods: \d+ \d+/m);
      }

      const down = await run('bash', [script, 'down'], { timeoutMs: 120_000 });
      expect(down.code).toBe(0);
      // leftovers also compares every kernel setting the node touches with its value before `up`.
      const left = await run('bash', [script, 'leftovers']);
      expect(left.code).toBe(0);
      expect(left.stdout).toBe('');
      expect(readFileSync(resolve(e.E2E_DIR, 'real-node.sysctl'), 'utf8')).toMatch(/^kernel\.panic=/m);
      expect(readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim()).toBe(/^net\.ipv4\.ip_forward=(\d)/m.exec(readFileSync(resolve(e.E2E_DIR, 'real-node.sysctl'), 'utf8'))?.[1]);
    } finally {
      // Back up with the same forwarded ports (the API server's, Prometheus', the gate exporter's).
      const apiPort = new URL((await kubectlOk(['config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}'])).stdout).port;
      const up = await run('bash', [script, 'up', dirname(e.KUBECTL), apiPort, new URL(e.PROMETHEUS_URL).port, new URL(e.GATE_URL).port], { timeoutMs: 180_000 });
      if (up.code !== 0) throw new Error(`real-node.sh up failed: ${up.stderr}`);
      // (`up` waits for a heartbeat of the new kubelet, not the Ready the old Node object still shows.
      // A first heartbeat may still say NotReady, until the kubelet has seen its runtime and network
      // ready: one CI run read False right after `up`. Ready within a minute is what a node owes.)
      await eventually(async () => {
        const n = await getJson(['node', node]);
        expect(n.status.conditions.find((c: { type: string }) => c.type === 'Ready').status).toBe('True');
      }, 60_000, 500);
      await deleteNamespace(ns);
    }
  });
});
