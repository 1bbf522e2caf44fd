// A pod on the real node is real: a process runs and exits, probes run, a container is killed and
// restarted, a preStop hook and the grace period are honoured, a volume keeps its data, and cluster DNS
// and Service addresses work. Each case reads what kubelet and containerd did, not a status someone wrote.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { jest } from '@jest/globals';
import { eventually } from '../support/eventually.js';
import { createNamespace, deleteNamespace, env, getJson, kubectlOk, run } from './cluster.js';
import { needRealNode, onRealNode, realNodeIt } from './real-node.js';

jest.setTimeout(120_000);
const { realIt, skipped } = realNodeIt();

type Pod = Record<string, any>;
const pod = (name: string, spec: Record<string, unknown>, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: onRealNode({ terminationGracePeriodSeconds: 1, ...spec }),
});
const container = (image: string, command: string, extra: Record<string, unknown> = {}) => ({ name: 'c', image, imagePullPolicy: 'Never', command: ['sh', '-c', command], ...extra });

describe(`pods on the real node${skipped}`, () => {
  let ns = '';
  beforeAll(async () => {
    ns = await createNamespace('e2e-real');
  });
  afterAll(async () => {
    if (ns) await deleteNamespace(ns);
  });
  const get = (name: string) => getJson<Pod>(['pod', name, '-n', ns]);
  const apply = (m: unknown) => kubectlOk(['apply', '-n', ns, '-f', '-'], m);

  realIt('runs the command: a random token from its environment comes back as its termination message', async () => {
    const { busybox, node } = needRealNode();
    const token = randomBytes(16).toString('hex');
    await apply(pod('token', { restartPolicy: 'Never', containers: [container(busybox, 'printf %s "$TOKEN" > /dev/termination-log', { env: [{ name: 'TOKEN', value: token }] })] }));
    const done = await eventually(async () => {
      const p = await get('token');
      expect(p.status.phase).toBe('Succeeded');
      return p;
    }, 60_000, 250);
    expect(done.spec.nodeName).toBe(node);
    const term = done.status.containerStatuses[0].state.terminated;
    expect(term.exitCode).toBe(0);
    expect(term.message).toBe(token);
    // An address from the node's pod network, and a container ID of its containerd.
    expect(done.status.podIP).toMatch(/^10\.244\.0\.\d+$/);
    expect(done.status.containerStatuses[0].containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
  });

  realIt('a failing liveness probe restarts the container', async () => {
    const { busybox } = needRealNode();
    // Healthy for 2 s, then the probe's file is gone: kubelet kills the container and starts it again.
    await apply(pod('liveness', {
      containers: [container(busybox, 'touch /tmp/healthy; sleep 2; rm /tmp/healthy; sleep 600', {
        livenessProbe: { exec: { command: ['cat', '/tmp/healthy'] }, periodSeconds: 1, failureThreshold: 1 },
      })],
    }));
    const p = await eventually(async () => {
      const s = (await get('liveness')).status.containerStatuses?.[0];
      expect(s?.restartCount ?? 0).toBeGreaterThanOrEqual(1);
      return s;
    }, 60_000, 500);
    expect(p.lastState.terminated).toBeDefined();
    const events = await kubectlOk(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=liveness', '-o', 'jsonpath={.items[*].message}']);
    expect(events.stdout).toMatch(/Liveness probe failed/);
  });

  realIt('a readiness probe gates Ready until it passes', async () => {
    const { busybox } = needRealNode();
    await apply(pod('readiness', {
      containers: [container(busybox, 'sleep 600', { readinessProbe: { exec: { command: ['test', '-f', '/tmp/ready'] }, periodSeconds: 1 } })],
    }));
    await eventually(async () => expect((await get('readiness')).status.containerStatuses?.[0]?.started).toBe(true), 60_000, 250);
    // Running for a few probe periods, and still not Ready.
    await new Promise((r) => setTimeout(r, 3_000));
    const before = await get('readiness');
    expect(before.status.phase).toBe('Running');
    expect(before.status.conditions.find((c: { type: string }) => c.type === 'Ready').status).toBe('False');
    // The probe's file appears (kubectl exec: API server -> kubelet -> containerd), and Ready follows.
    await kubectlOk(['exec', '-n', ns, 'readiness', '--', 'touch', '/tmp/ready']);
    await eventually(async () => {
      expect((await get('readiness')).status.conditions.find((c: { type: string }) => c.type === 'Ready').status).toBe('True');
    }, 20_000, 250);
  });

  realIt('deletion runs the preStop hook, sends SIGTERM after it, and waits the grace period before SIGKILL', async () => {
    const { busybox } = needRealNode();
    const host = resolve(env().E2E_DIR, 'node', 'test-host', ns);
    mkdirSync(host, { recursive: true });
    const grace = 4;
    // The container notes SIGTERM and then ignores it; only SIGKILL at the end of the grace period ends it.
    await apply(pod('graceful', {
      terminationGracePeriodSeconds: grace,
      volumes: [{ name: 'host', hostPath: { path: host, type: 'Directory' } }],
      containers: [container(busybox, 'trap "echo term >> /host/log" TERM; echo started >> /host/log; while true; do sleep 0.2; done', {
        volumeMounts: [{ name: 'host', mountPath: '/host' }],
        lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo prestop >> /host/log'] } } },
      })],
    }));
    await eventually(async () => expect(readFileSync(resolve(host, 'log'), 'utf8')).toContain('started'), 60_000, 250);
    const t0 = Date.now();
    await kubectlOk(['delete', 'pod', 'graceful', '-n', ns, '--wait=true', '--timeout=60s']);
    const tookS = (Date.now() - t0) / 1000;
    const log = readFileSync(resolve(host, 'log'), 'utf8').trim().split('\n');
    expect(log).toEqual(['started', 'prestop', 'term']);
    expect(tookS).toBeGreaterThanOrEqual(grace - 0.5);
    expect(tookS).toBeLessThan(grace + 20);
    rmSync(host, { recursive: true, force: true });
  });

  realIt('a PVC from the node\'s hostPath provisioner keeps its data across the pod\'s deletion', async () => {
    const { busybox } = needRealNode();
    const token = randomBytes(8).toString('hex');
    await apply({
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' },
      spec: { storageClassName: 'phased-rollout-hostpath', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } },
    });
    const volume = { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] };
    const mount = { volumeMounts: [{ name: 'data', mountPath: '/data' }] };
    await apply(pod('writer', { restartPolicy: 'Never', ...volume, containers: [container(busybox, `printf ${token} > /data/token; sync`, mount)] }));
    await eventually(async () => expect((await get('writer')).status.phase).toBe('Succeeded'), 60_000, 250);
    await kubectlOk(['delete', 'pod', 'writer', '-n', ns, '--wait=true']);
    await apply(pod('reader', { restartPolicy: 'Never', ...volume, containers: [container(busybox, 'cat /data/token > /dev/termination-log', mount)] }));
    const reader = await eventually(async () => {
      const p = await get('reader');
      expect(p.status.phase).toBe('Succeeded');
      return p;
    }, 60_000, 250);
    expect(reader.status.containerStatuses[0].state.terminated.message).toBe(token);
    const pvc = await getJson(['pvc', 'data', '-n', ns]);
    expect(pvc.status.phase).toBe('Bound');
  });

  realIt('cluster DNS and kube-proxy: a headless Service names each pod, a ClusterIP Service balances to them', async () => {
    const { busybox } = needRealNode();
    const labels = { app: 'web' };
    await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { clusterIP: 'None', selector: labels, ports: [{ port: 8080 }] } });
    await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web-vip' }, spec: { selector: labels, ports: [{ port: 80, targetPort: 8080 }] } });
    await apply({
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web' },
      spec: {
        replicas: 2, serviceName: 'web', selector: { matchLabels: labels }, podManagementPolicy: 'Parallel',
        template: {
          metadata: { labels },
          spec: onRealNode({
            terminationGracePeriodSeconds: 1,
            containers: [container(busybox, 'mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www', { readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 } })],
          }),
        },
      },
    });
    await eventually(async () => expect((await getJson(['statefulset', 'web', '-n', ns])).status.readyReplicas ?? 0).toBe(2), 60_000, 250);
    // A client pod: each pod by its stable DNS name, then the Service's virtual address until both answer.
    const script = [
      `wget -qO- http://web-0.web.${ns}.svc.cluster.local:8080/`,
      `wget -qO- http://web-1.web:8080/`,
      // Over up to 10 s: kube-proxy writes a new endpoint's rules a moment after the pod is Ready.
      'for i in $(seq 1 100); do wget -qO- http://web-vip/; sleep 0.1; done | sort -u | tr "\\n" " "',
    ].join('; ');
    await apply(pod('client', { restartPolicy: 'Never', containers: [container(busybox, `(${script}) > /dev/termination-log 2>&1`)] }));
    const client = await eventually(async () => {
      const p = await get('client');
      expect(['Succeeded', 'Failed']).toContain(p.status.phase);
      return p;
    }, 60_000, 250);
    const out: string = client.status.containerStatuses[0].state.terminated.message;
    expect(out.split(/\s+/).filter(Boolean)).toEqual(['web-0', 'web-1', 'web-0', 'web-1']);
    expect(client.status.phase).toBe('Succeeded');
    const vip = await getJson(['service', 'web-vip', '-n', ns]);
    expect(vip.spec.clusterIP).toMatch(/^10\.96\./);
  });

  realIt('contained: a pod has routes to the pod and Service ranges only, outside names are NXDOMAIN, and the guards stand first', async () => {
    const { busybox } = needRealNode();
    // Read inside a pod: its routing table and an outside name's answer (CoreDNS forwards nothing).
    await apply(pod('contained', { restartPolicy: 'Never', containers: [container(busybox, '(ip route; nslookup example.com 2>&1 || true) > /dev/termination-log')] }));
    const p = await eventually(async () => {
      const x = await get('contained');
      expect(x.status.phase).toBe('Succeeded');
      return x;
    }, 60_000, 250);
    const out: string = p.status.containerStatuses[0].state.terminated.message;
    const routes = out.split('\n').filter((l) => /^(default|\d+\.\d+\.\d+\.\d+)/.test(l)).map((l) => l.split(' ')[0]);
    expect(routes.sort()).toEqual(['10.244.0.0/24', '10.96.0.0/16']);
    expect(out).toMatch(/NXDOMAIN/);
    // On the host: forwarding is on for the bridge only, and the guards come first in raw and mangle
    // (kube-proxy prepends its own jumps to filter FORWARD, so the filter guard alone would not do).
    expect(readFileSync('/proc/sys/net/ipv4/conf/pr-br0/forwarding', 'utf8').trim()).toBe('1');
    const first = async (table: string, chain: string) => (await run('iptables', ['-w', '-t', table, '-S', chain])).stdout.split('\n')[1];
    expect(await first('raw', 'PREROUTING')).toBe('-A PREROUTING -j PHASED-ROLLOUT-GUARD');
    expect(await first('mangle', 'FORWARD')).toBe('-A FORWARD -j PHASED-ROLLOUT-GUARD');
  });
});
