// A primary/replica database under phased-rollout: `npm run scenario:postgres -- upgrade` (scenarios/
// postgres) as a user runs it, on the real node, with its RESULT line asserted. Three PostgreSQL members
// run by Patroni under a steady stream of commits; a pod-template change restarts every member. With the
// recipe's switchover hook the primary is handed over before its pod goes: no acknowledged commit lost,
// no unplanned failover, at most one switchover, every member on the new template, the safety checker
// clean. The other systems and the bad release run on demand (docs/postgres.md).
import { resolve } from 'node:path';
import { jest } from '@jest/globals';
import { ROOT } from '../support/process.js';
import { env, run } from './cluster.js';
import { needRealNode, realNodeIt } from './real-node.js';

jest.setTimeout(900_000);
const { realIt, skipped } = realNodeIt();

describe(`PostgreSQL (Patroni) on the real node, rolled under write load${skipped}`, () => {
  // The image first (built from Debian's packages on a machine's first run), outside the scenario's time.
  beforeAll(async () => {
    if (skipped) return;
    const r = await run('bash', [resolve(ROOT, 'hack', 'node', 'images.sh'), 'postgres'], { env: { PHASED_ROLLOUT_E2E_DIR: env().E2E_DIR }, timeoutMs: 900_000 });
    if (r.code !== 0) throw new Error(`hack/node/images.sh postgres: ${r.stderr}`);
  }, 900_000);

  realIt('upgrade with the switchover hook: nothing lost, no failover, at most one switchover, every member on the new template', async () => {
    needRealNode();
    const r = await run('bash', [resolve(ROOT, 'hack', 'scenario-postgres.sh'), 'upgrade', '--system', 'ours', '--quiet'], { env: { PHASED_ROLLOUT_E2E_DIR: env().E2E_DIR }, timeoutMs: 840_000 });
    console.log(`scenario:postgres upgrade:\n${r.stdout}${r.stderr}`);
    const fields = (prefix: string) => Object.fromEntries([...(r.stdout.split('\n').find((l) => l.startsWith(`${prefix} `)) ?? '').matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1] ?? '', m[2] ?? '']));
    const result = fields('RESULT');
    expect(r.stdout).not.toContain('UNMET');
    expect(r.code).toBe(0);
    expect(result).toMatchObject({ scenario: 'upgrade', system: 'ours', lost: '0', failovers: '0', members_on_new: '3/3' });
    expect(Number(result.switchovers)).toBeLessThanOrEqual(1);
    expect(Number(result.acked)).toBeGreaterThan(500);
    expect(fields('DETAIL')).toMatchObject({ gated_steps: '3', safety_violations: '0', streaming: '2/2' });
  });
});
