#!/usr/bin/env node
// The kubectl plugin's start-up, as a user feels it: `kubectl phased-rollout status -A` against the
// warm cluster of hack/e2e-up.sh, wall time from the process's spawn to its first byte of output and
// to its exit. Two builds of the same code, alternated in one run so the machine's noise falls on both:
//  - modules: tsc's output importing its packages from node_modules (dist/plugin/main.js), as before;
//  - bundle:  the shipped bundle (dist/bundle/plugin.mjs, hack/bundle.mjs).
// Reproduce: npm run e2e:up && npm run bench:plugin -- --runs 9
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { e2eEnv, median, ROOT } from './e2e-env.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '9' } } });
const RUNS = Number(values.runs);
const env = e2eEnv();

const BUILDS = { modules: resolve(ROOT, 'dist', 'plugin', 'main.js'), bundle: resolve(ROOT, 'dist', 'bundle', 'plugin.mjs') } as const;

/** once runs the plugin and returns ms to its first output byte and to its exit. */
function once(entry: string): Promise<{ first: number; exit: number }> {
  return new Promise((ok, fail) => {
    const t0 = process.hrtime.bigint();
    const ms = () => Number(process.hrtime.bigint() - t0) / 1e6;
    let first: number | undefined;
    const child = spawn(process.execPath, [entry, 'status', '-A'], { env: { ...process.env, KUBECONFIG: env.KUBECONFIG }, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stdout.on('data', () => (first ??= ms()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', fail);
    child.on('exit', (code) => (code === 0 && first !== undefined ? ok({ first, exit: ms() }) : fail(new Error(`${entry} status -A exited ${code}: ${err}`))));
  });
}

const samples: Record<keyof typeof BUILDS, { first: number; exit: number }[]> = { modules: [], bundle: [] };
// One untimed run of each first: the file cache holds both afterwards, as on a user's machine.
for (const entry of Object.values(BUILDS)) await once(entry);
for (let i = 0; i < RUNS; i++) for (const [name, entry] of Object.entries(BUILDS) as [keyof typeof BUILDS, string][]) samples[name].push(await once(entry));

const row = (name: keyof typeof BUILDS) => {
  const first = median(samples[name].map((s) => s.first));
  const exit = median(samples[name].map((s) => s.exit));
  return { first, exit, line: `${name.padEnd(8)} first output ${first.toFixed(0).padStart(5)} ms   exit ${exit.toFixed(0).padStart(5)} ms` };
};
const m = row('modules');
const b = row('bundle');
console.log(`kubectl phased-rollout status -A, median of ${RUNS} runs each (alternated):`);
console.log(`  ${m.line}`);
console.log(`  ${b.line}`);
console.log(`  bundle / modules: first output ${(b.first / m.first).toFixed(2)}, exit ${(b.exit / m.exit).toFixed(2)}`);
console.log(`reproduce: npm run e2e:up && npm run bench:plugin -- --runs ${RUNS}`);
