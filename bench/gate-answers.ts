// What large gate answers cost the controller: ten gates of one StatefulSet queried at once (the most
// a StatefulSet may have) against a loopback server answering a vector of a given size, through the
// real client (bounded read, parse, verdict). Reports the CPU time, the longest event-loop stall and
// the heap growth of one such check, at the old 4 MiB cap and at the 256 KiB default of
// --max-gate-answer-bytes, and their ratio. Medians of --rounds.
// Reproduce: npm run bench:gate-answers [-- --rounds 5]
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { queryGate } from '../src/prometheus/client.js';
import { median } from './e2e-env.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
const ROUNDS = Number(values.rounds);
const GATES = 10;

/** answer builds a Prometheus vector answer of about `bytes` bytes. */
function answer(bytes: number): string {
  const one = '{"metric":{"__name__":"up","pod":"db-0","namespace":"prod"},"value":[1767225600,"1"]},';
  const n = Math.max(1, Math.floor(bytes / one.length));
  return `{"status":"success","data":{"resultType":"vector","result":[${one.repeat(n - 1)}${one.slice(0, -1)}]}}`;
}

async function measure(url: string, maxBytes: number): Promise<{ cpuMs: number; stallMs: number; heapMb: number; verdict: string }> {
  globalThis.gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const cpu0 = process.cpuUsage();
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 1);
  const verdicts = await Promise.all(Array.from({ length: GATES }, () => queryGate({ prometheusUrl: url, query: 'up', timeoutMs: 30_000, maxBytes })));
  clearInterval(sampler);
  const cpu = process.cpuUsage(cpu0);
  h.disable();
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  return { cpuMs: (cpu.user + cpu.system) / 1000, stallMs: h.max / 1e6, heapMb: (peak - heap0) / 1024 / 1024, verdict: verdicts[0]?.result ?? '?' };
}

async function main(): Promise<void> {
  const sizes = [4 * 1024 * 1024, 256 * 1024];
  const bodies = new Map(sizes.map((s) => [s, answer(s - 1024)]));
  let size = sizes[0] as number;
  const server = createServer((_q, r) => r.writeHead(200, { 'content-type': 'application/json' }).end(bodies.get(size)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const rows: Record<number, { cpuMs: number[]; stallMs: number[]; heapMb: number[] }> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of sizes) {
      size = s;
      const m = await measure(url, s);
      if (m.verdict !== 'pass') throw new Error(`a ${s}-byte answer did not pass: ${m.verdict}`);
      const row = (rows[s] ??= { cpuMs: [], stallMs: [], heapMb: [] });
      row.cpuMs.push(m.cpuMs);
      row.stallMs.push(m.stallMs);
      row.heapMb.push(m.heapMb);
    }
  }
  server.close();
  console.log(`one check of ${GATES} gates, each answer at the cap (medians of ${ROUNDS}):`);
  for (const s of sizes) {
    const r = rows[s]!;
    console.log(`  ${s / 1024} KiB answers: CPU ${median(r.cpuMs).toFixed(0)} ms, longest event-loop stall ${median(r.stallMs).toFixed(0)} ms, heap +${median(r.heapMb).toFixed(0)} MB`);
  }
  const [big, small] = [rows[sizes[0] as number]!, rows[sizes[1] as number]!];
  console.log(`ratio 4 MiB / 256 KiB: CPU ${(median(big.cpuMs) / median(small.cpuMs)).toFixed(1)}x, stall ${(median(big.stallMs) / median(small.stallMs)).toFixed(1)}x, heap ${(median(big.heapMb) / median(small.heapMb)).toFixed(1)}x`);
  console.log('reproduce: npm run bench:gate-answers -- --rounds 5');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
