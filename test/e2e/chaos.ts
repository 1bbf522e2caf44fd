// Shared pieces of the chaos suites (test/e2e/chaos-*.test.ts): a seeded random source, a gated
// StatefulSet that rolls, and the report rows that hack/e2e-test.sh prints as a table at the end.
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { KEYS } from '../../src/annotations.js';
import { eventually } from '../support/eventually.js';
import { statefulSet } from '../support/statefulset.js';
import { env, getJson, kubectlOk, podRevisions, setGate } from './cluster.js';

/** random is a small seeded generator (mulberry32), so a run can be repeated from its printed seed. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** chaosSeed is PHASED_ROLLOUT_CHAOS_SEED when set (to repeat a run), else a fresh one. */
export function chaosSeed(): number {
  return Number(process.env.PHASED_ROLLOUT_CHAOS_SEED ?? Date.now() % 1_000_000);
}

/** ChaosRow is one line of the chaos table: what was done to the system and what survived it. */
export interface ChaosRow {
  scenario: string;
  tried: string;
  survived: string;
  ok: boolean;
}

/** reportChaos prints a row and appends it to .e2e/chaos-report.jsonl for the table at the end. */
export function reportChaos(row: ChaosRow): void {
  console.log(`chaos: ${JSON.stringify(row)}`);
  const file = resolve(env().E2E_DIR, 'chaos-report.jsonl');
  mkdirSync(dirname(file), { recursive: true });
  appendFileSync(file, `${JSON.stringify(row)}\n`);
}

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
    await eventually(async () => expect((await this.get()).status.readyReplicas ?? 0).toBe(this.replicas), 30_000 + this.replicas * 5_000, 300);
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
