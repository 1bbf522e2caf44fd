// Rollout groups under a race: three members of one group get a new template in the same
// `kubectl apply -f dir/` (one request per file, milliseconds apart), round after round. The members
// must roll strictly one at a time: the independent safety checker replays the audit log and names any
// step taken while another member had a step in flight or a pod down. Short in `npm run test:e2e`
// (PHASED_ROLLOUT_CHAOS_GROUP_ROUNDS, default 2); `npm run test:chaos` runs 20 rounds.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { reportChaos, violationsText } from './chaos.js';
import { createNamespace, deleteNamespace, getJson, kubectlOk, safetyReport, setGate } from './cluster.js';
import { fastGate, Rollout } from './rollout.js';

const ROUNDS = Number(process.env.PHASED_ROLLOUT_CHAOS_GROUP_ROUNDS ?? 2);
jest.setTimeout(60_000 + ROUNDS * 60_000);

let ns: string;
let dir: string;
beforeAll(async () => {
  ns = await createNamespace('e2e-chaos-groups');
  dir = mkdtempSync(join(tmpdir(), 'phased-rollout-groups-'));
});
afterAll(async () => {
  await deleteNamespace(ns);
  rmSync(dir, { recursive: true, force: true });
});

describe('chaos: group members applied together', () => {
  it(`${ROUNDS} round(s) of three members applied in one kubectl apply -f dir/ roll strictly one at a time`, async () => {
    // One gate series for all three, and every member in the same group-order: the race is on names.
    const members = ['zone-a', 'zone-b', 'zone-c'].map((n) => new Rollout(ns, n, 2, fastGate(`${ns}-g`, { [KEYS.group]: 'zones' })));
    await setGate(`${ns}-g`, '1');
    for (const m of members) await m.create();
    let mostAtOnce = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      for (const m of members) {
        m.manifest.spec.template.spec.containers[0]!.image = `registry.example/app:${round + 1}`;
        writeFileSync(join(dir, `${m.name}.json`), JSON.stringify(m.manifest));
      }
      await kubectlOk(['apply', '-f', dir]);
      // Watch until all three are Completed on their new revision; count members moving at once.
      const deadline = Date.now() + 60_000;
      for (;;) {
        const list = await getJson<{ items: Record<string, any>[] }>(['statefulsets', '-n', ns]);
        const moving = list.items.filter((s) => s.spec.updateStrategy.rollingUpdate.partition < s.spec.replicas).length;
        mostAtOnce = Math.max(mostAtOnce, moving);
        const done = list.items.filter((s) => {
          const st = JSON.parse(s.metadata.annotations?.[KEYS.status] ?? 'null');
          // The StatefulSet controller must have seen this round's template: right after the apply, the
          // spec says the new image while the status still names the last round's revision, Completed.
          return s.status.observedGeneration === s.metadata.generation &&
            st?.phase === 'Completed' && st.revision === s.status.updateRevision && s.status.updateRevision === s.status.currentRevision && s.spec.template.spec.containers[0].image === `registry.example/app:${round + 1}`;
        }).length;
        if (done === members.length) break;
        if (Date.now() > deadline) throw new Error(`round ${round}: the group did not complete within 60 s`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const report = await safetyReport(ns);
    reportChaos({
      scenario: 'group members applied together',
      tried: `${ROUNDS} round(s): 3 members of one group, same group-order, in one kubectl apply -f dir/`,
      survived: `${report.lowerings} lowerings, ${report.gatedSteps} gated steps, ${report.revertsOrBypasses} reverts, ${violationsText(report.violations)} (zone safety, one member at a time); at most ${mostAtOnce} member(s) seen below their replicas at once`,
      ok: report.violations.length === 0 && mostAtOnce === 1,
    });
    expect(report.violations).toEqual([]);
    expect(mostAtOnce).toBe(1);
    expect(report.gatedSteps).toBeGreaterThanOrEqual(ROUNDS * members.length * 2);
  });
});
