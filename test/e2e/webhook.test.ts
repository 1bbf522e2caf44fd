// The webhook against a real kube-apiserver and the real StatefulSet controller (kwok nodes), driven
// through kubectl exactly as a user would. Scenarios of the "real control plane" issue, in order.
import { resolve } from 'node:path';
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { ROOT } from '../support/process.js';
import { statefulSet } from '../support/statefulset.js';
import { admissionOnly, env, getJson, harnessProcess, kubectl, kubectlOk, podRevisions, run, setPodReady, waitHttp } from './cluster.js';


// Real clusters are slower than unit tests; each step below still waits only for what it needs.
jest.setTimeout(120_000);

const WEBHOOK = 'statefulsets.phased-rollout.io';
const DENIED = `admission webhook "${WEBHOOK}" denied the request: phased-rollout:`;

// These scenarios are about admission alone: no controller may move anything meanwhile.
const scope = admissionOnly('e2e-webhook');
let ns: string;
beforeAll(() => {
  ns = scope.ns();
});

const manifest = (name: string, o: Parameters<typeof statefulSet>[1] = {}) => ({ ...statefulSet(name, o), metadata: { ...statefulSet(name, o).metadata, namespace: ns } });
const strategy = async (name: string) => (await getJson(['statefulset', name, '-n', ns])).spec.updateStrategy;

async function readyReplicas(name: string, want: number): Promise<void> {
  await eventually(async () => expect((await getJson(['statefulset', name, '-n', ns])).status.readyReplicas ?? 0).toBe(want), 60_000, 250);
}

describe('scenarios 1-2: apply pins, a new image does not roll by itself', () => {
  it('creates with partition = replicas, shows the warning, and kwok makes the pods Ready', async () => {
    const r = await kubectl(['apply', '-f', '-'], manifest('web'));
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Warning: phased-rollout: rollout gated, partition pinned to 3');
    expect(await strategy('web')).toMatchObject({ type: 'RollingUpdate', rollingUpdate: { partition: 3 } });
    await readyReplicas('web', 3);
  });

  it('a new image changes updateRevision, keeps partition 3, and replaces no pod', async () => {
    const before = await getJson(['statefulset', 'web', '-n', ns]);
    const podsBefore = await podRevisions(ns, 'web');
    const r = await kubectl(['apply', '-f', '-'], manifest('web', { image: 'registry.example/app:2' }));
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Warning: phased-rollout: change pinned at partition 3');
    await eventually(async () => {
      const sts = await getJson(['statefulset', 'web', '-n', ns]);
      expect(sts.status.observedGeneration).toBe(sts.metadata.generation);
      expect(sts.status.updateRevision).not.toBe(before.status.updateRevision);
    }, 20_000, 200);
    expect(await strategy('web')).toMatchObject({ type: 'RollingUpdate', rollingUpdate: { partition: 3 } });
    // Watch for a while: every pod keeps its name, uid and old revision (no controller is moving anything).
    const uids = async () => (await getJson<{ items: { metadata: { uid: string } }[] }>(['pods', '-n', ns, '-l', 'app=web'])).items.map((p) => p.metadata.uid).sort();
    const uidsBefore = await uids();
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setTimeout(r, 500));
      expect(await podRevisions(ns, 'web')).toEqual(podsBefore);
    }
    expect(await uids()).toEqual(uidsBefore);
    expect(Object.values(podsBefore).every((h) => h === before.status.updateRevision)).toBe(true);
  });
});

describe('scenarios 3-4: denials reach kubectl', () => {
  it('3: kubectl patch of the partition is denied with the managed-partition message', async () => {
    const r = await kubectl(['patch', 'statefulset', 'web', '-n', ns, '--type=merge', '-p', '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":1}}}}']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${DENIED} partition of StatefulSet ${ns}/web is managed by phased-rollout (currently 3); remove it from your manifest`);
    expect(await strategy('web')).toMatchObject({ type: 'RollingUpdate', rollingUpdate: { partition: 3 } });
  });

  it('4: OnDelete on an opted-in StatefulSet is denied', async () => {
    const r = await kubectl(['patch', 'statefulset', 'web', '-n', ns, '--type=json', '-p', '[{"op":"replace","path":"/spec/updateStrategy","value":{"type":"OnDelete"}}]']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${DENIED} StatefulSet ${ns}/web uses updateStrategy OnDelete, which cannot be gated`);
  });

  it('4: a bad annotation value is denied naming the key, the value and what is allowed', async () => {
    const m = manifest('typo', { annotations: { [KEYS.enabled]: 'yes', [KEYS.query]: 'up', [KEYS.periodSeconds]: '0' } });
    const r = await kubectl(['apply', '-f', '-'], m);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${DENIED} StatefulSet ${ns}/typo has invalid annotations:`);
    expect(r.stderr).toContain(`${KEYS.enabled}: "yes" (allowed: "true" or "false")`);
    expect(r.stderr).toContain(`${KEYS.periodSeconds}: "0" (allowed: an integer from 1 to 86400)`);
    expect((await kubectl(['get', 'statefulset', 'typo', '-n', ns])).code).not.toBe(0);
  });
});

describe('scenario 5: server-side apply, server dry-run, replace', () => {
  it('kubectl apply --server-side creates pinned and re-applies without a denial', async () => {
    const m = manifest('ssa', { replicas: 2 });
    const first = await kubectl(['apply', '--server-side', '-f', '-'], m);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('partition pinned to 2');
    expect(await strategy('ssa')).toMatchObject({ type: 'RollingUpdate', rollingUpdate: { partition: 2 } });
    const again = await kubectl(['apply', '--server-side', '-f', '-'], m);
    expect(again.code).toBe(0);
    const changed = await kubectl(['apply', '--server-side', '-f', '-'], manifest('ssa', { replicas: 2, image: 'registry.example/app:2' }));
    expect(changed.code).toBe(0);
    expect(await strategy('ssa')).toMatchObject({ type: 'RollingUpdate', rollingUpdate: { partition: 2 } });
  });

  it('kubectl apply --dry-run=server shows the pinned partition and stores nothing', async () => {
    const r = await kubectl(['apply', '--dry-run=server', '-o', 'json', '-f', '-'], manifest('dry', { replicas: 4, partition: 0 }));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).spec.updateStrategy).toMatchObject({ type: 'RollingUpdate', rollingUpdate: { partition: 4 } });
    expect(r.stderr).toContain('partition pinned to 4');
    expect((await kubectl(['get', 'statefulset', 'dry', '-n', ns])).code).not.toBe(0);
  });

  it('kubectl replace with a changed template is pinned, not denied', async () => {
    const live = await getJson(['statefulset', 'web', '-n', ns]);
    live.spec.template.spec.containers[0].image = 'registry.example/app:3';
    live.spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { partition: 0 } };
    const r = await kubectl(['replace', '-f', '-'], live);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('change pinned at partition 3');
    expect(await strategy('web')).toMatchObject({ type: 'RollingUpdate', rollingUpdate: { partition: 3 } });
  });
});

describe('scenario 6: matchConditions, and failing closed when the webhook is down', () => {
  const requests = async () => {
    const text = await (await fetch(`${env().WEBHOOK_METRICS_URL}/metrics`)).text();
    return [...text.matchAll(/^phased_rollout_admission_requests_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
  };

  it('never sends a StatefulSet without the annotation to the webhook', async () => {
    const before = await requests();
    const plain = manifest('plain', { annotations: {} });
    expect((await kubectl(['apply', '-f', '-'], plain)).code).toBe(0);
    expect((await kubectl(['apply', '-f', '-'], manifest('plain', { annotations: {}, image: 'x:2' }))).code).toBe(0);
    expect(await requests()).toBe(before);
  });

  it('with the webhook stopped: unannotated StatefulSets still work, opted-in ones fail closed', async () => {
    await harnessProcess('stop', 'webhook');
    try {
      const plain = await kubectl(['apply', '-f', '-'], manifest('plain2', { annotations: {} }));
      expect(plain.code).toBe(0);
      const gated = await kubectl(['apply', '-f', '-'], manifest('gated-down'));
      expect(gated.code).not.toBe(0);
      expect(gated.stderr).toContain(`failed calling webhook "${WEBHOOK}"`);
      expect((await kubectl(['get', 'statefulset', 'gated-down', '-n', ns])).code).not.toBe(0);
    } finally {
      await harnessProcess('start', 'webhook');
      await waitHttp(`${env().WEBHOOK_METRICS_URL}/readyz`);
    }
    expect((await kubectl(['apply', '-f', '-'], manifest('gated-up'))).code).toBe(0);
  });
});

describe('scenario 7: the ValidatingAdmissionPolicy backstop', () => {
  it('denies OnDelete on an opted-in StatefulSet with the MutatingWebhookConfiguration deleted', async () => {
    const registration = resolve(env().E2E_DIR, 'registration.json');
    await kubectlOk(['delete', 'mutatingwebhookconfiguration', 'phased-rollout']);
    try {
      const m = manifest('backstop');
      (m.spec as Record<string, unknown>).updateStrategy = { type: 'OnDelete' };
      // The policy's informer may take a moment to see a freshly created object; it is already loaded here.
      const r = await kubectl(['apply', '-f', '-'], m);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('ValidatingAdmissionPolicy \'phased-rollout-no-ondelete\'');
      expect(r.stderr).toContain(`phased-rollout: StatefulSet ${ns}/backstop uses updateStrategy OnDelete, which cannot be gated`);
      // The bypass of the policy: opting out with "false" is allowed (the user takes the StatefulSet back).
      const off = manifest('backstop', { annotations: { [KEYS.enabled]: 'false' } });
      (off.spec as Record<string, unknown>).updateStrategy = { type: 'OnDelete' };
      expect((await kubectl(['apply', '-f', '-'], off)).code).toBe(0);
    } finally {
      await kubectlOk(['apply', '-f', registration]);
    }
  });
});

describe('the status subresource: our annotations cannot be forged through /status', () => {
  // The API server's status strategy resets .spec of a status write, not .metadata: a forged
  // RollingBack (the current revision as the failed one, the update revision as the one to return to)
  // would make the controller lower the partition to 0 with no gate.
  const name = 'forged';
  const forgedPatch = async () => {
    const s = (await getJson(['statefulset', name, '-n', ns])).status;
    const status = { phase: 'RollingBack', revision: s.updateRevision, failedRevision: s.currentRevision, previousRevision: s.updateRevision, partition: 3, replicas: 3 };
    return JSON.stringify({ metadata: { annotations: { [KEYS.status]: JSON.stringify(status) } } });
  };
  const patchStatus = async (kubeconfig?: string) => kubectl(['patch', 'statefulset', name, '-n', ns, '--subresource=status', '--type=merge', '-p', await forgedPatch()], undefined, kubeconfig);
  const message = () => `phased-rollout: annotation ${KEYS.status} of StatefulSet ${ns}/${name} cannot be changed through the status subresource; phased-rollout.io/ annotations are set on the StatefulSet itself`;
  const annotations = async () => (await getJson(['statefulset', name, '-n', ns])).metadata.annotations as Record<string, string>;
  const requests = async () => {
    const text = await (await fetch(`${env().WEBHOOK_METRICS_URL}/metrics`)).text();
    return [...text.matchAll(/^phased_rollout_admission_requests_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
  };
  /** The StatefulSet controller writes status.readyReplicas through /status when a pod's readiness changes. */
  const readyFollows = async (pod: number, ready: boolean) => {
    await setPodReady(ns, `${name}-${pod}`, ready);
    await readyReplicas(name, ready ? 3 : 2);
  };

  beforeAll(async () => {
    expect((await kubectl(['apply', '-f', '-'], manifest(name, { image: 'registry.example/app:1' }))).code).toBe(0);
    await readyReplicas(name, 3);
    // A pending revision, as in a rollout the forged status would finish.
    expect((await kubectl(['apply', '-f', '-'], manifest(name, { image: 'registry.example/app:2' }))).code).toBe(0);
    await eventually(async () => {
      const s = await getJson(['statefulset', name, '-n', ns]);
      expect(s.status.updateRevision).not.toBe(s.status.currentRevision);
    }, 20_000, 200);
  });

  it('with the webhook up, a user\'s forged status through /status is denied by the webhook, and the StatefulSet controller\'s status writes never reach it', async () => {
    const before = await annotations();
    const r = await patchStatus();
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${DENIED} ${message().slice('phased-rollout: '.length)}`);
    expect(await annotations()).toEqual(before);
    // Adding any other key of ours there is refused the same way.
    const paused = await kubectl(['patch', 'statefulset', name, '-n', ns, '--subresource=status', '--type=merge', '-p', JSON.stringify({ metadata: { annotations: { [KEYS.paused]: 'true' } } })]);
    expect(paused.stderr).toContain(`${DENIED} annotation ${KEYS.paused} of StatefulSet ${ns}/${name} cannot be changed through the status subresource`);
    // Status writes that leave our annotations alone (the StatefulSet controller's) are not sent.
    const sent = await requests();
    await readyFollows(0, false);
    await readyFollows(0, true);
    expect(await requests()).toBe(sent);
  });

  it('with the webhook stopped, the forged status fails closed and the StatefulSet controller still writes status', async () => {
    await harnessProcess('stop', 'webhook');
    try {
      const r = await patchStatus();
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(`failed calling webhook "${WEBHOOK}"`);
      await readyFollows(1, false);
      await readyFollows(1, true);
    } finally {
      await harnessProcess('start', 'webhook');
      await waitHttp(`${env().WEBHOOK_METRICS_URL}/readyz`);
    }
  });

  it('with the MutatingWebhookConfiguration deleted, the ValidatingAdmissionPolicy denies it', async () => {
    const registration = resolve(env().E2E_DIR, 'registration.json');
    await kubectlOk(['delete', 'mutatingwebhookconfiguration', 'phased-rollout']);
    try {
      const before = await annotations();
      const r = await patchStatus();
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain("ValidatingAdmissionPolicy 'phased-rollout-status-annotations'");
      expect(r.stderr).toContain(message());
      expect(await annotations()).toEqual(before);
      // The policy passes the StatefulSet controller's status writes.
      await readyFollows(2, false);
      await readyFollows(2, true);
    } finally {
      await kubectlOk(['apply', '-f', registration]);
    }
  });

  it('the controller writes its status annotation with a patch of the StatefulSet itself, never through /status', async () => {
    const controller = env().CONTROLLER_KUBECONFIG;
    const own = JSON.stringify({ phase: 'Idle', revision: 'r', message: 'written as the controller' });
    const r = await kubectl(['patch', 'statefulset', name, '-n', ns, '--type=merge', '-p', JSON.stringify({ metadata: { annotations: { [KEYS.status]: own } } })], undefined, controller);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect((await annotations())[KEYS.status]).toBe(own);
    // Its RBAC holds no rights on statefulsets/status: the rule above costs it nothing.
    const status = await patchStatus(controller);
    expect(status.code).not.toBe(0);
    // (kubectl reads the subresource before it patches: the first refusal is of that read.)
    expect(status.stderr).toMatch(/cannot (get|patch) resource "statefulsets\/status"/);
  });

  it('both policies type-check against the API server\'s schema', async () => {
    for (const policy of ['phased-rollout-status-annotations', 'phased-rollout-no-ondelete']) {
      await eventually(async () => {
        const p = await getJson(['validatingadmissionpolicy', policy]);
        expect(p.status?.typeChecking).toBeDefined();
        expect(p.status.typeChecking.expressionWarnings ?? []).toEqual([]);
      }, 20_000, 250);
    }
  });
});

describe('scenario 8: the shipped manifests', () => {
  it('kubectl apply --dry-run=server -k manifests/overlays/dev succeeds against the real apiserver', async () => {
    const gen = await run(process.execPath, [resolve(ROOT, 'dist/certs/generate.js'), '--out', resolve(ROOT, 'manifests/overlays/dev/certs')]);
    expect(gen.code).toBe(0);
    const r = await kubectl(['apply', '--dry-run=server', '-k', resolve(ROOT, 'manifests/overlays/dev')]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const kind of ['deployment.apps/phased-rollout-webhook', 'deployment.apps/phased-rollout-controller', 'mutatingwebhookconfiguration.admissionregistration.k8s.io/phased-rollout', 'validatingadmissionpolicy.admissionregistration.k8s.io/phased-rollout-no-ondelete', 'validatingadmissionpolicy.admissionregistration.k8s.io/phased-rollout-status-annotations', 'validatingadmissionpolicy.admissionregistration.k8s.io/phased-rollout-controller-jobs', 'validatingadmissionpolicy.admissionregistration.k8s.io/phased-rollout-controller-statefulsets', 'secret/phased-rollout-webhook-tls']) {
      expect(r.stdout).toContain(kind);
    }
  });

  it('kubectl kustomize manifests/overlays/cert-manager builds', async () => {
    const r = await kubectl(['kustomize', resolve(ROOT, 'manifests/overlays/cert-manager')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('cert-manager.io/inject-ca-from: phased-rollout-system/phased-rollout-webhook');
    expect(r.stdout).toContain('kind: Certificate');
  });
});
