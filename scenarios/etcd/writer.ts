// The scenarios' load: sequential keys written at a fixed rate through etcd's HTTP/JSON gateway
// (/v3/kv/put), every write recorded with its latency, and at the end every key read back.
//
// It behaves like etcd's own client: it keeps to one member until that member fails it, then moves on
// to the next, and it retries a write on the other members until the write's deadline. A retried put
// writes the same value, so a first attempt that timed out but was committed after all does no harm.
// Members are addressed by their DNS names, resolved through the cluster's DNS on each attempt (a
// replaced pod comes back with another address).
import type { WriteRecord } from './results.js';

/** WriterOptions: where to write and how hard. */
export interface WriterOptions {
  /** The members' base URLs (http://host:2379), resolved afresh when called. */
  endpoints: () => Promise<string[]>;
  /** Writes per second. */
  rate: number;
  /** Key prefix; keys are `${prefix}/${seq}` zero-padded. */
  prefix: string;
  /** One attempt's timeout (ms). */
  attemptMs?: number;
  /** A write that is not acknowledged within this long (ms) counts as failed. */
  deadlineMs?: number;
  now?: () => number;
}

/** Counters are the live numbers (the demo prints them). */
export interface Counters {
  acked: number;
  failed: number;
  inFlight: number;
}

const b64 = (s: string | Buffer) => (typeof s === 'string' ? Buffer.from(s, 'utf8') : s).toString('base64');
const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

/** prefixEnd is etcd's range end for "every key with this prefix": the prefix with its last byte plus one. */
export function prefixEnd(prefix: string): Buffer {
  const b = Buffer.from(prefix, 'utf8');
  let i = b.length - 1;
  while (i >= 0 && b[i] === 0xff) i--;
  // All 0xff (or empty): no key is greater; etcd reads "\0" as "to the end of the keyspace".
  if (i < 0) return Buffer.from([0]);
  const out = Buffer.from(b.subarray(0, i + 1));
  out[i] = (out[i] as number) + 1;
  return out;
}

/** Writer writes until stopped. */
export class Writer {
  readonly records: WriteRecord[] = [];
  private readonly o: Required<WriterOptions>;
  private timer: NodeJS.Timeout | undefined;
  private pending = new Set<Promise<void>>();
  private pinned = 0;
  private seq = 0;
  private readonly counters: Counters = { acked: 0, failed: 0, inFlight: 0 };

  constructor(o: WriterOptions) {
    this.o = { attemptMs: 1000, deadlineMs: 3000, now: Date.now, ...o };
  }

  /** start schedules writes at the fixed rate (a write that is slow never holds back the next). */
  start(): void {
    const every = 1000 / this.o.rate;
    const t0 = this.o.now();
    const tick = () => {
      // Catch up on the schedule rather than drift: the rate is writes per second of wall time.
      while (this.seq < Math.floor((this.o.now() - t0) / every) + 1) this.launch();
      this.timer = setTimeout(tick, every / 2);
    };
    tick();
  }

  /** stop ends the schedule and waits for the writes in flight (each ends by its deadline). */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all([...this.pending]);
  }

  /** live is a snapshot of the counters. */
  live(): Counters {
    return { ...this.counters };
  }

  private launch(): void {
    const seq = ++this.seq;
    const rec: WriteRecord = { seq, key: `${this.o.prefix}/${String(seq).padStart(8, '0')}`, value: `v${seq}`, sentAt: this.o.now() };
    this.records.push(rec);
    this.counters.inFlight++;
    const p = this.write(rec).finally(() => {
      this.counters.inFlight--;
      this.pending.delete(p);
    });
    this.pending.add(p);
  }

  private async write(rec: WriteRecord): Promise<void> {
    const deadline = rec.sentAt + this.o.deadlineMs;
    let why = 'no member to write to';
    while (this.o.now() < deadline) {
      const eps = await this.o.endpoints().catch(() => []);
      if (eps.length === 0) {
        await sleep(100);
        continue;
      }
      const ep = eps[this.pinned % eps.length] as string;
      const left = Math.min(this.o.attemptMs, deadline - this.o.now());
      // Too little time left for a fair attempt: the write fails here, and no member is blamed for it.
      if (left < 100) break;
      try {
        await post(ep, '/v3/kv/put', { key: b64(rec.key), value: b64(rec.value) }, left);
        rec.ackAt = this.o.now();
        this.counters.acked++;
        return;
      } catch (e) {
        why = (e as Error).message;
        // This member failed us: the next write and the next attempt go to the next one.
        if (eps[this.pinned % eps.length] === ep) this.pinned++;
      }
    }
    rec.error = why;
    this.counters.failed++;
  }
}

/** readBack reads every key under the prefix (linearizable, in pages) from the first member that answers; retried until `timeoutMs`. */
export async function readBack(endpoints: () => Promise<string[]>, prefix: string, timeoutMs = 60_000): Promise<Map<string, string>> {
  const end = Date.now() + timeoutMs;
  let why = 'no member answered';
  while (Date.now() < end) {
    for (const ep of await endpoints().catch(() => [])) {
      try {
        return await readAll(ep, prefix);
      } catch (e) {
        why = `${ep}: ${(e as Error).message}`;
      }
    }
    await sleep(1000);
  }
  throw new Error(`reading the keys back failed: ${why}`);
}

async function readAll(ep: string, prefix: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const rangeEnd = b64(prefixEnd(prefix));
  let from = prefix;
  for (;;) {
    const r = (await post(ep, '/v3/kv/range', { key: b64(from), range_end: rangeEnd, limit: 1000 }, 10_000)) as { kvs?: { key: string; value?: string }[]; more?: boolean };
    const kvs = r.kvs ?? [];
    for (const kv of kvs) out.set(unb64(kv.key), unb64(kv.value ?? ''));
    if (!r.more || kvs.length === 0) return out;
    from = `${unb64((kvs[kvs.length - 1] as { key: string }).key)}\0`;
  }
}

/** post sends one gateway request; anything but a 2xx answer with a JSON body is an error. */
async function post(ep: string, path: string, body: unknown, timeoutMs: number): Promise<unknown> {
  const res = await fetch(`${ep}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(Math.max(1, timeoutMs)) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as unknown;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
