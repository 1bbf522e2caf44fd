// Shared pieces of the chaos suites (test/e2e/chaos-*.test.ts): a seeded random source and the report
// rows that hack/e2e-test.sh prints as a table at the end.
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Violation } from '../support/safety-checker.js';
import { env } from './cluster.js';

/** random is a small seeded generator, so a run can be repeated from its printed seed. */
export { seeded as random } from '../support/seeded.js';

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

/**
 * violationsText is "N violations", followed by the distinct reasons when there are any, so a failing
 * chaos row says why even where only the table of a run is seen.
 */
export function violationsText(violations: Violation[]): string {
  if (violations.length === 0) return '0 violations';
  const whys = [...new Set(violations.map((v) => `${v.at} ${v.statefulset}: ${v.why}`))];
  return `${violations.length} violations (${whys.join('; ')})`;
}
