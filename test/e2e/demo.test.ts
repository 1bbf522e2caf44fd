// The README's first command, `npm run demo`, run non-interactively as a user would after `npm ci`:
// its own control plane (state in a temp folder, beside the suite's), the Helm install, a good release
// to Completed through the live table, a bad one rolled back; then `--down`. Proves the front door.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { ROOT } from '../support/process.js';
import { run } from './cluster.js';

jest.setTimeout(420_000);

let state: string;
beforeAll(() => {
  state = mkdtempSync(join(tmpdir(), 'phased-rollout-demo-'));
});
afterAll(async () => {
  await run('bash', [join(ROOT, 'hack', 'demo.sh'), '--down', '--state', state], { timeoutMs: 120_000 });
  rmSync(state, { recursive: true, force: true });
});

describe('npm run demo', () => {
  it('rolls a good release to Completed and rolls a bad one back, then tells what happened', async () => {
    const t0 = Date.now();
    const r = await run('bash', [join(ROOT, 'hack', 'demo.sh'), '--state', state], { timeoutMs: 400_000 });
    const took = Date.now() - t0;
    if (r.code !== 0) throw new Error(`demo exited ${r.code}\n${r.stdout}\n${r.stderr}`);
    const out = r.stdout;
    // Helm, the live table, both releases, the summary and the way out.
    expect(out).toMatch(/helm upgrade --install demo charts\/phased-rollout -n phased-rollout-demo: deployed/);
    expect(out).toContain('rollout gated, partition pinned to 5');
    expect(out).toMatch(/NAME +PHASE +PARTITION +UPDATED +GATE/);
    expect(out).toMatch(/^web +Completed +5\/5 +5\/5/m);
    expect(out).toMatch(/^web +RolledBack +5\/5/m);
    expect(out).toMatch(/RolloutCompleted/);
    // Both releases step 5 -> 4: their Events name the revision, so the timeline shows two steps, not
    // one Event that the API server merged (count 2) and showed under the bad release.
    expect(out.match(/PartitionLowered +partition 5 -> 4 after \d+\/\d+ passing checks of revision web-\w+/g)).toHaveLength(2);
    expect(out).not.toMatch(/PartitionLowered .*\(x\d+, last shown\)/);
    expect(out).toMatch(/CheckFailed +gate failed: query returned no samples/);
    expect(out).toMatch(/RolledBack /);
    expect(out).toMatch(/release 2: Completed in [\d.]+ s/);
    expect(out).toMatch(/release 3: the gate failed after its first pod; rolled back to \S+ in [\d.]+ s; 5\/5 pods on/);
    expect(out).toContain('npm run demo -- --down');
    console.log(`npm run demo (its own cold control plane, binaries cached): ${(took / 1000).toFixed(1)} s`);

    // A second run on the warm environment: no build, no start-up; the first table comes quickly.
    const t1 = Date.now();
    const again = await run('bash', [join(ROOT, 'hack', 'demo.sh'), '--state', state], { timeoutMs: 400_000 });
    if (again.code !== 0) throw new Error(`second demo exited ${again.code}\n${again.stdout}\n${again.stderr}`);
    expect(again.stderr).toContain('environment already up');
    const table = /==> \[([\d.]+) s\] release 2/.exec(again.stdout)?.[1];
    expect(table).toBeDefined();
    console.log(`second npm run demo (warm): the rolling table from ${table} s, ${((Date.now() - t1) / 1000).toFixed(1)} s in all`);
  });
});
