// The PostgreSQL scenarios' load: rows inserted at a fixed rate through the Service that Patroni points
// at the primary, as an application finds it, each acknowledged commit recorded, and at the end every
// row read back from the primary.
//
// Like an application with a connection pool: a write goes through a pooled connection; one that fails
// (the primary went away, the connection was cut by a switchover) is dropped from the pool, and the
// write is retried on a fresh connection until its deadline. A retried insert writes the same value
// (INSERT .. ON CONFLICT DO UPDATE), so a first attempt that was committed after all does no harm.
import pg from 'pg';
import type { WriteRecord } from '../etcd/results.js';

/** Target is where to connect: the leader Service's address, and the superuser's credentials. */
export interface Target {
  host: string;
  port: number;
  user: string;
  password: string;
}

export interface WriterOptions {
  target: Target;
  rate: number;
  /** One attempt's timeout (ms): connect and commit. */
  attemptMs?: number;
  /** A write not acknowledged within this long (ms) counts as failed. */
  deadlineMs?: number;
}

export interface Counters {
  acked: number;
  failed: number;
  inFlight: number;
}

/** TABLE is the table the writer inserts into (the bad migration drops it). */
export const TABLE = 'scenario_writes';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pool(t: Target, attemptMs: number, max: number): pg.Pool {
  const p = new pg.Pool({ host: t.host, port: t.port, user: t.user, password: t.password, database: 'postgres', max, connectionTimeoutMillis: attemptMs, idleTimeoutMillis: 5000, query_timeout: attemptMs, statement_timeout: attemptMs });
  // A connection cut while idle (a switchover, the primary's pod deleted) is dropped, not thrown.
  p.on('error', () => undefined);
  return p;
}

/** prepare creates the table (once, on the primary). */
export async function prepareTable(t: Target, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  let why = '';
  while (Date.now() < end) {
    const p = pool(t, 3000, 1);
    try {
      await p.query(`CREATE TABLE IF NOT EXISTS ${TABLE} (seq bigint PRIMARY KEY, value text NOT NULL)`);
      return;
    } catch (e) {
      why = (e as Error).message;
      await sleep(1000);
    } finally {
      await p.end().catch(() => undefined);
    }
  }
  throw new Error(`cannot create the table through ${t.host}:${t.port}: ${why}`);
}

export class Writer {
  readonly records: WriteRecord[] = [];
  private readonly o: Required<WriterOptions>;
  private readonly pool: pg.Pool;
  private timer: NodeJS.Timeout | undefined;
  private readonly pending = new Set<Promise<void>>();
  private seq = 0;
  private readonly counters: Counters = { acked: 0, failed: 0, inFlight: 0 };
  private readonly watched = new WeakSet<pg.PoolClient>();

  constructor(o: WriterOptions) {
    this.o = { attemptMs: 1000, deadlineMs: 3000, ...o };
    this.pool = pool(o.target, this.o.attemptMs, 8);
  }

  /** start schedules writes at the fixed rate (a slow write never holds back the next). */
  start(): void {
    const every = 1000 / this.o.rate;
    const t0 = Date.now();
    const tick = () => {
      while (this.seq < Math.floor((Date.now() - t0) / every) + 1) this.launch();
      this.timer = setTimeout(tick, every / 2);
    };
    tick();
  }

  /** stop ends the schedule, waits for the writes in flight (each ends by its deadline) and closes the pool. */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all([...this.pending]);
    await this.pool.end().catch(() => undefined);
  }

  live(): Counters {
    return { ...this.counters };
  }

  private launch(): void {
    const seq = ++this.seq;
    const rec: WriteRecord = { seq, key: String(seq), value: `v${seq}`, sentAt: Date.now() };
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
    let why = 'no attempt';
    while (deadline - Date.now() >= 100) {
      let client: pg.PoolClient | undefined;
      try {
        client = await this.pool.connect();
        // A connection the server ends while it is checked out (a switchover, the primary's pod going)
        // emits 'error' on the client: the query in flight fails with it, nothing more to do.
        if (!this.watched.has(client)) {
          this.watched.add(client);
          client.on('error', () => undefined);
        }
        await client.query(`INSERT INTO ${TABLE} (seq, value) VALUES ($1, $2) ON CONFLICT (seq) DO UPDATE SET value = EXCLUDED.value`, [rec.seq, rec.value]);
        client.release();
        rec.ackAt = Date.now();
        this.counters.acked++;
        return;
      } catch (e) {
        why = (e as Error).message;
        // A broken connection is not given back to the pool.
        client?.release(true);
        await sleep(50);
      }
    }
    rec.error = why;
    this.counters.failed++;
  }
}

/** readBack reads every row from the primary, retried until `timeoutMs`. */
export async function readBack(t: Target, timeoutMs = 60_000): Promise<Map<string, string>> {
  const rows = await readRows(t, timeoutMs);
  if (!rows) throw new Error(`reading the rows back failed: there is no table ${TABLE}`);
  return rows;
}

/**
 * readRows reads every row, retried until `timeoutMs`; null when the server answers that the table does
 * not exist (SQLSTATE 42P01): a table dropped stays dropped, so that answer is not retried.
 */
export async function readRows(t: Target, timeoutMs = 60_000): Promise<Map<string, string> | null> {
  const end = Date.now() + timeoutMs;
  let why = '';
  while (Date.now() < end) {
    const p = pool(t, 10_000, 1);
    try {
      const r = await p.query<{ seq: string; value: string }>(`SELECT seq::text AS seq, value FROM ${TABLE}`);
      return new Map(r.rows.map((row) => [row.seq, row.value]));
    } catch (e) {
      if ((e as { code?: string }).code === '42P01') return null;
      why = (e as Error).message;
      await sleep(1000);
    } finally {
      await p.end().catch(() => undefined);
    }
  }
  throw new Error(`reading the rows back failed: ${why}`);
}
