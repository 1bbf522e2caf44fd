#!/usr/bin/env node
// npm run scenario:etcd:table [-- --runs 3] [--only zones,...] [--systems ours,plain,grafana]: every
// scenario (or those named) with each system (default ours and plain), `runs` rounds, one after
// the other (never two at once: one real node), then the markdown table of docs/etcd.md. Each run's
// output goes to .e2e/scenarios/<scenario>-<system>-<round>.log.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from './cluster.js';
import { fieldsOf, table, type Run } from './table.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, only: { type: 'string' }, systems: { type: 'string', default: 'ours,plain' } } });
const rounds = Number(values.runs);
const names = values.only ? values.only.split(',') : ['upgrade', 'bad-release', 'zones', 'controller-kill'];
const logs = resolve(process.env.PHASED_ROLLOUT_E2E_DIR ?? resolve(ROOT, '.e2e'), 'scenarios');
mkdirSync(logs, { recursive: true });
const runs: Run[] = [];
for (let round = 1; round <= rounds; round++) {
  for (const name of names) {
    for (const system of values.systems.split(',')) {
      const t0 = Date.now();
      const r = spawnSync('bash', [resolve(ROOT, 'hack', 'scenario-etcd.sh'), name, '--system', system, '--quiet'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      writeFileSync(resolve(logs, `${name}-${system}-${round}.log`), `${r.stdout}\n${r.stderr}`);
      const lines = r.stdout.split('\n');
      const result = lines.find((l) => l.startsWith('RESULT '));
      const detail = lines.find((l) => l.startsWith('DETAIL '));
      const unmet = lines.filter((l) => l.startsWith('UNMET '));
      process.stdout.write(`${result ?? `no RESULT: ${name} ${system} (exit ${r.status}), see ${logs}`} (${Math.round((Date.now() - t0) / 1000)} s)\n`);
      for (const u of unmet) process.stdout.write(`  ${u}\n`);
      if (result) runs.push({ ...fieldsOf(detail ?? ''), ...fieldsOf(result) });
    }
  }
}
process.stdout.write(`\n${table(runs).join('\n')}\n`);
