#!/usr/bin/env node
// A flood from one tenant pod against the webhook's HTTPS port, as a process of its own (an attacker is
// not the API server: the load it generates must not slow the client that measures the webhook). Runs
// at once, each bounded: `--idle` silent TLS connections re-opened every 250 ms, `--bodies` unfinished
// bodies of 8 MiB - 1 byte, `--slow-bodies` bodies of 64 bytes sent a byte a second (issue 46 §3.4),
// and every 10 s the 8 MiB JSON bombs of webhook-process.test.ts; stops by
// itself after `--for`, prints one JSON line of what it did, exits 0. `--nice N` lowers its CPU priority by N:
// in a cluster the attacking pod's CPU is not the webhook's, while on one test machine the two share the
// same cores, and a flood at full priority measures how they split the CPU as much as the webhook.
// Used by test/integration/webhook-flood.test.ts; by hand:
//   node dist/bench/admission-flood.js --port 9443 --ca ca.crt --for 60s
import { readFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parseArgs } from 'node:util';
import { parseDuration } from '../src/runtime/config.js';
import { bombRounds, idleFlood, slowBodies, unfinishedBodies } from './flood-loads.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    ca: { type: 'string' },
    for: { type: 'string', default: '60s' },
    idle: { type: 'string', default: '300' },
    bodies: { type: 'string', default: '6' },
    'slow-bodies': { type: 'string', default: '0' },
    'bomb-rounds': { type: 'string', default: '6' },
    nice: { type: 'string', default: '0' },
  },
});
if (values.port === undefined || values.ca === undefined) {
  process.stderr.write('usage: admission-flood --port PORT --ca CA_FILE [--for 60s] [--idle 300] [--bodies 6] [--slow-bodies 0] [--bomb-rounds 6] [--nice 0]\n');
  process.exit(2);
}
// Relative, as nice(1): never above the priority it was started with.
setPriority(Math.min(19, getPriority() + Number(values.nice)));
const target = { port: Number(values.port), ca: readFileSync(values.ca, 'utf8') };
const forMs = parseDuration(values.for) ?? 60_000;
const idle = idleFlood(target, { sockets: Number(values.idle), reopenEveryMs: 250, forMs, maxOpens: 100_000 });
const bodies = unfinishedBodies(target, { sockets: Number(values.bodies), reopenEveryMs: 250, forMs, maxOpens: 10_000, declared: 8 * 1024 * 1024 - 1 });
const slow = slowBodies(target, { sockets: Number(values['slow-bodies']), reopenEveryMs: 250, forMs, maxOpens: 100_000, declared: 64, byteEveryMs: 1000 });
const aborted = new AbortController();
const bombs = bombRounds(target, { rounds: Number(values['bomb-rounds']), everyMs: 10_000, forMs, signal: aborted.signal });
// SIGTERM ends it early.
const stop = () => {
  idle.stop();
  bodies.stop();
  slow.stop();
  aborted.abort();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
const [idleStats, bodyStats, slowStats, bombStatuses] = await Promise.all([idle.done, bodies.done, slow.done, bombs]);
const counts: Record<string, number> = {};
for (const s of bombStatuses) counts[s] = (counts[s] ?? 0) + 1;
process.stdout.write(`${JSON.stringify({ idle: idleStats, bodies: bodyStats, slowBodies: slowStats, bombs: counts })}\n`);
process.exit(0);
