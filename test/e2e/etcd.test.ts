// A real quorum database under phased-rollout: `npm run scenario:etcd` (scenarios/etcd) as a user runs
// it, on the real node, with its RESULT lines asserted. A 3-member etcd cluster under a steady write load:
//  - upgrade 3.6 -> 3.7 one member at a time, gated on etcd's own metrics: every member on 3.7, not one
//    acknowledged write lost, no gap in the writes longer than one election;
//  - a bad release whose member passes its readiness probe but bootstraps a cluster of its own: at most
//    one member ever on it, rolled back, nothing lost, the quorum of two serving throughout.
// The scenario's own expectations (scenarios/etcd/expectations.ts) and the independent safety checker
// over the audit log run inside it; a miss prints UNMET lines and exits 1.
// The bad release is the representative case and always runs. The upgrade (about 2 minutes) runs on
// demand, PHASED_ROLLOUT_E2E_LONG=1 (docs/testing.md); without it, it is reported as skipped, with the
// reason in its name. The PostgreSQL test rolls a database upgrade in every run.
import { resolve } from 'node:path';
import { jest } from '@jest/globals';
import { ROOT } from '../support/process.js';
import { env, run } from './cluster.js';
import { needRealNode, realNodeIt } from './real-node.js';

jest.setTimeout(900_000);
const { realIt, skipped } = realNodeIt();
const long = process.env.PHASED_ROLLOUT_E2E_LONG === '1';
const longIt = long ? realIt : it.skip;
const onDemand = long ? '' : ' [skipped: on demand, PHASED_ROLLOUT_E2E_LONG=1]';

/** scenario runs `npm run scenario:etcd -- NAME --system ours` and returns its output, RESULT and DETAIL fields. */
async function scenario(name: string): Promise<{ code: number; out: string; result: Record<string, string>; detail: Record<string, string> }> {
  const r = await run('bash', [resolve(ROOT, 'hack', 'scenario-etcd.sh'), name, '--system', 'ours', '--quiet'], { env: { PHASED_ROLLOUT_E2E_DIR: env().E2E_DIR }, timeoutMs: 840_000 });
  const fields = (prefix: string) => Object.fromEntries([...(r.stdout.split('\n').find((l) => l.startsWith(`${prefix} `)) ?? '').matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1] ?? '', m[2] ?? '']));
  console.log(`scenario:etcd ${name}:\n${r.stdout}${r.stderr}`);
  return { code: r.code, out: `${r.stdout}\n${r.stderr}`, result: fields('RESULT'), detail: fields('DETAIL') };
}

describe(`etcd on the real node, rolled under write load${skipped}`, () => {
  // The etcd images first (built from the Go module proxy on a machine's first run), outside the
  // scenarios' own time limit.
  beforeAll(async () => {
    if (skipped) return;
    const r = await run('bash', [resolve(ROOT, 'hack', 'node', 'images.sh'), 'etcd'], { env: { PHASED_ROLLOUT_E2E_DIR: env().E2E_DIR }, timeoutMs: 900_000 });
    if (r.code !== 0) throw new Error(`hack/node/images.sh etcd: ${r.stderr}`);
  }, 900_000);

  longIt(`upgrade 3.6 -> 3.7: every member on the new release, nothing lost, no gap longer than one election${onDemand}`, async () => {
    needRealNode();
    const { code, out, result, detail } = await scenario('upgrade');
    expect(out).not.toContain('UNMET');
    expect(code).toBe(0);
    expect(result).toMatchObject({ scenario: 'upgrade', system: 'ours', lost: '0', members_on_new: '3/3' });
    expect(Number(result.acked)).toBeGreaterThan(1000);
    expect(Number(result.unavailable_s)).toBeLessThanOrEqual(3);
    expect(detail).toMatchObject({ gated_steps: '3', safety_violations: '0', max_down: '1' });
  });

  realIt('a bad release that passes readiness: one member on it at most, rolled back, nothing lost, writes go on', async () => {
    needRealNode();
    const { code, out, result, detail } = await scenario('bad-release');
    expect(out).not.toContain('UNMET');
    expect(code).toBe(0);
    expect(result).toMatchObject({ scenario: 'bad-release', system: 'ours', lost: '0', members_on_new: '0/3' });
    expect(Number(result.unavailable_s)).toBeLessThanOrEqual(3);
    expect(detail).toMatchObject({ max_on_new: '1', safety_violations: '0', max_down: '1' });
  });
});
