// The webhook benchmark in its smoke mode: it still builds, starts both servers, sends every case and
// prints its table. Numbers from a smoke run mean nothing; the run not rotting is the point.
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { jest } from '@jest/globals';

jest.setTimeout(120_000);

const ROOT = resolve(import.meta.dirname, '..', '..');

it('bench:mutate --smoke runs every case and prints the ratios (throughput, CPU per request) to both baselines', async () => {
  const out = await new Promise<string>((res, rej) =>
    execFile(process.execPath, [resolve(ROOT, 'dist', 'bench', 'mutate.js'), '--smoke'], { timeout: 110_000 }, (err, stdout, stderr) => (err ? rej(new Error(`${err.message}\n${stderr}`)) : res(stdout))),
  );
  // Each case: the ratios to the bare baseline, then to the express baseline (throughput, CPU per request).
  for (const c of ['UPDATE 7 KB', 'UPDATE 1 MB template', 'CREATE', 'malformed body']) expect(out).toMatch(new RegExp(`^${c} .*\\| +\\d+\\.\\d\\d +(\\d+\\.\\d\\d|-) \\| +\\d+\\.\\d\\d +(\\d+\\.\\d\\d|-)$`, 'm'));
  expect(out).toMatch(/at a fixed 500 req\/s .* webhook p50 [\d.]+ ms p99 [\d.]+ ms; bare baseline .* express baseline p50 [\d.]+ ms p99 [\d.]+ ms/);
  expect(out).toMatch(/peak RSS: webhook \d+ MB, baseline \d+ MB, express baseline \d+ MB/);
  expect(out).toMatch(/webhook cold start, process start -> \/readyz: median \d+ ms/);
  expect(out).toContain('reproduce: npm run bench:mutate');
});
