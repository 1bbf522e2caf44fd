// A gated StatefulSet driven through kubectl, for the end-to-end suites: the quick gate annotations,
// create, roll a new image, wait for a step or for completion.
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { statefulSet } from '../support/statefulset.js';
import { getJson, kubectlOk, podRevisions, setGate } from './cluster.js';

/** fastGate are the annotations of a quick gate on the exporter's series e2e_gate{name}. */
export function fastGate(name: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    [KEYS.enabled]: 'true',
    [KEYS.query]: `e2e_gate{name="${name}"} == 1`,
    [KEYS.initialDelaySeconds]: '0',
    [KEYS.periodSeconds]: '1',
    [KEYS.successThreshold]: '2',
    ...extra,
  };
}

/** Rollout drives one StatefulSet of a chaos suite through kubectl. */
export class Rollout {
  readonly manifest: ReturnType<typeof statefulSet> & { metadata: { namespace: string } };

  constructor(
    readonly ns: string,
    readonly name: string,
    readonly replicas: number,
    annotations: Record<string, string> = fastGate(name),
  ) {
    const m = statefulSet(name, { replicas, annotations });
    this.manifest = { ...m, metadata: { ...m.metadata, namespace: ns } };
  }

  /** get reads the StatefulSet. */
  get(): Promise<Record<string, any>> {
    return getJson(['statefulset', this.name, '-n', this.ns]);
  }

  /** partition reads the current partition. */
  async partition(): Promise<number> {
    return (await this.get()).spec.updateStrategy.rollingUpdate.partition as number;
  }

  /** status reads the controller's status annotation. */
  async status(): Promise<Record<string, any> | null> {
    return JSON.parse((await this.get()).metadata.annotations?.[KEYS.status] ?? 'null');
  }

  /** create applies revision 1 with a passing gate and waits for every pod to be ready. */
  async create(): Promise<void> {
    await setGate(this.name, '1');
    await kubectlOk(['apply', '-f', '-'], this.manifest);
    // A budget, not a measure: real pods on a loaded 2-core machine start one at a time (OrderedReady)
    // and took over 12 s each at times; a passing run never waits for it.
    await eventually(async () => expect((await this.get()).status.readyReplicas ?? 0).toBe(this.replicas), 60_000 + this.replicas * 10_000, 300);
  }

  /** roll applies a new image and returns the new update revision once the StatefulSet controller named it. */
  async roll(image: string, change: (m: Rollout['manifest']) => void = () => undefined): Promise<string> {
    const before = (await this.get()).status.updateRevision;
    this.manifest.spec.template.spec.containers[0]!.image = image;
    change(this.manifest);
    await kubectlOk(['apply', '-f', '-'], this.manifest);
    return eventually(async () => {
      const s = await this.get();
      expect(s.status.updateRevision).not.toBe(before);
      return s.status.updateRevision as string;
    }, 20_000, 200);
  }

  /** nextStep waits (bounded) until the partition goes below `from`; false when it did not in time. */
  async nextStep(from: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if ((await this.partition()) < from) return true;
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  }

  /** completed waits until the rollout to `revision` is Completed, re-pinned, and every pod runs it. */
  async completed(revision: string, timeoutMs = 120_000): Promise<void> {
    await eventually(async () => {
      expect(await this.status()).toMatchObject({ phase: 'Completed', revision });
      expect(await this.partition()).toBe(this.replicas);
      expect(Object.values(await podRevisions(this.ns, this.name)).filter((r) => r === revision)).toHaveLength(this.replicas);
    }, timeoutMs, 500);
  }
}
