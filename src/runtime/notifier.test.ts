// The notifier against real loopback receivers: order, retries, a receiver that never answers, the
// queue bound and shutdown.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Registry } from 'prom-client';
import { quietLog } from '../../test/support/quiet-log.js';
import type { Notification } from '../rollout/notify.js';
import { Notifier, type Destination } from './notifier.js';

const open: Server[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))));
});

/** receiver answers each POST with `answer(i)` (a status, or 'hang' to never answer) and records bodies. */
async function receiver(answer: (i: number) => number | 'hang' = () => 204) {
  const got: unknown[] = [];
  let i = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const a = answer(i++);
      if (a === 'hang') return;
      if (a >= 200 && a < 300) got.push(JSON.parse(body));
      res.writeHead(a).end();
    });
  });
  open.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { got, url, calls: () => i };
}

const dest = (key: string, url: string, format: 'json' | 'slack' = 'json'): Destination => ({ key, resolve: async () => ({ url, format }) });
const note = (i: number): Notification => ({ kind: 'step', namespace: 'ns', statefulset: 'db', reason: 'PartitionLowered', message: `step ${i}`, time: '' });

function notifier(o: Partial<ConstructorParameters<typeof Notifier>[0]> = {}) {
  const registry = new Registry();
  const sent = new Counter({ name: 'n', help: 'n', labelNames: ['result'], registers: [registry] });
  const n = new Notifier({ log: quietLog().log, timeoutMs: 300, backoffMs: 10, minIntervalMs: 0, ...o, sent });
  const counts = async () => Object.fromEntries((await sent.get()).values.map((v) => [v.labels.result, v.value]));
  return { n, counts };
}

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('Notifier', () => {
  it('delivers every message in order, as JSON or as a Slack message', async () => {
    const a = await receiver();
    const s = await receiver();
    const { n, counts } = notifier();
    for (let i = 0; i < 20; i++) {
      n.notify(dest('a', a.url), note(i));
      n.notify(dest('s', s.url, 'slack'), note(i));
    }
    await until(() => n.pending() === 0);
    expect(a.got.map((b) => (b as Notification).message)).toEqual(Array.from({ length: 20 }, (_, i) => `step ${i}`));
    expect(s.got[0]).toEqual({ text: 'phased-rollout: ns/db: rollout step: step 0' });
    expect(await counts()).toEqual({ sent: 40 });
  });

  it('retries a 5xx and a 429 with backoff, and gives a 4xx up at once', async () => {
    const flaky = await receiver((i) => (i === 0 ? 503 : i === 1 ? 429 : 204));
    const refusing = await receiver(() => 404);
    const { n, counts } = notifier();
    n.notify(dest('f', flaky.url), note(1));
    n.notify(dest('r', refusing.url), note(2));
    await until(() => n.pending() === 0);
    expect(flaky.calls()).toBe(3);
    expect(flaky.got).toHaveLength(1);
    expect(refusing.calls()).toBe(1);
    expect(await counts()).toEqual({ sent: 1, failed: 1 });
  });

  it('a receiver that never answers delays only its own messages: notify returns at once and the others arrive', async () => {
    const hanging = await receiver(() => 'hang');
    const fine = await receiver();
    const { n, counts } = notifier({ timeoutMs: 200, maxAttempts: 2 });
    const started = process.hrtime.bigint();
    for (let i = 0; i < 5; i++) {
      n.notify(dest('hang', hanging.url), note(i));
      n.notify(dest('fine', fine.url), note(i));
    }
    const tookMs = Number(process.hrtime.bigint() - started) / 1e6;
    expect(tookMs).toBeLessThan(100); // ten calls that only queue; a blocking send would take >= 200 ms
    await until(() => fine.got.length === 5, 2000);
    expect(hanging.calls()).toBeLessThanOrEqual(2); // still on its first message
    await until(() => n.pending() === 0, 10_000);
    expect(await counts()).toEqual({ sent: 5, failed: 5 });
    expect(hanging.calls()).toBe(10); // 5 messages x 2 attempts, each cut at the timeout
  });

  it('bounds each queue: the oldest messages are dropped and counted', async () => {
    const hanging = await receiver(() => 'hang');
    const { n, counts } = notifier({ timeoutMs: 100, maxAttempts: 1, maxQueue: 3 });
    for (let i = 0; i < 10; i++) n.notify(dest('h', hanging.url), note(i));
    expect(n.pending()).toBe(4); // one in flight, three queued
    expect(await counts()).toEqual({ dropped: 6 });
    await n.stop(0);
  });

  it('stop sends what it can within the grace, then drops the rest', async () => {
    const slow = await receiver(() => 'hang');
    const { n, counts } = notifier({ timeoutMs: 5000 });
    for (let i = 0; i < 3; i++) n.notify(dest('s', slow.url), note(i));
    const t = Date.now();
    await n.stop(100);
    expect(Date.now() - t).toBeLessThan(1000);
    n.notify(dest('s', slow.url), note(9));
    expect((await counts()).dropped).toBe(3); // two queued at stop, one after
  });

  it('a destination that cannot be resolved (a missing Secret) counts as failed after its retries', async () => {
    const { n, counts } = notifier({ maxAttempts: 2 });
    n.notify({ key: 'secret:ns/x', resolve: async () => Promise.reject(new Error('Secret ns/x not found')) }, note(1));
    await until(() => n.pending() === 0);
    expect(await counts()).toEqual({ failed: 1 });
  });
});
