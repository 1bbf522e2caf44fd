// Who may hold request-body memory when it is short, and how long a body may take: pure decisions at
// the moment a request head arrives, over what the requests being read have declared.
// connection-guard.ts acts on them.
import { spreadDeadlineMs } from '../src/runtime/socket-eviction.js';

/** BodyHold is the memory one admitted request may hold: its declared body, until it is answered. */
export interface BodyHold {
  id: number;
  /** The connection it came on: the share is per connection, so pipelining does not multiply it. */
  conn: number;
  bytes: number;
  /** Still reading its body (a request being decided or answered is not stopped to make room). */
  reading: boolean;
  /** When its head arrived (ms): among equals, the longer-held gives way first. */
  since: number;
}

/** BodyAdmission is the answer for a new request: admitted, after preempting some holds, or refused. */
export type BodyAdmission = { admit: true; preempt: number[] } | { admit: false; fairShare: number };

function totals(holds: readonly BodyHold[]): Map<number, number> {
  const byConn = new Map<number, number>();
  for (const h of holds) byConn.set(h.conn, (byConn.get(h.conn) ?? 0) + h.bytes);
  return byConn;
}

/**
 * admitBody admits a request that declares `want.bytes` on connection `want.conn` against a pool of
 * `capacity` bytes. When the pool has room, it is admitted. When it has not, the fair share is the
 * pool divided among the connections holding memory and the newcomer's: a newcomer within its share
 * is admitted by preempting bodies still being read on connections above their share (largest
 * connection first, then its largest and oldest hold), never taking one below its share; a newcomer
 * above its share is refused. So however many bodies stall, a request of at most capacity / (holders
 * + 1) bytes (every AdmissionReview of a usual StatefulSet) gets in, and no single connection keeps
 * more than its share while others wait.
 */
export function admitBody(holds: readonly BodyHold[], want: { conn: number; bytes: number }, capacity: number): BodyAdmission {
  const held = holds.reduce((n, h) => n + h.bytes, 0);
  if (held + want.bytes <= capacity) return { admit: true, preempt: [] };
  const byConn = totals(holds);
  const fairShare = Math.floor(capacity / (byConn.size + (byConn.has(want.conn) ? 0 : 1)));
  if ((byConn.get(want.conn) ?? 0) + want.bytes > fairShare) return { admit: false, fairShare };
  const candidates = holds
    .filter((h) => h.reading && h.conn !== want.conn && (byConn.get(h.conn) ?? 0) > fairShare)
    .sort((a, b) => (byConn.get(b.conn) ?? 0) - (byConn.get(a.conn) ?? 0) || b.bytes - a.bytes || a.since - b.since || a.id - b.id);
  const preempt: number[] = [];
  let free = capacity - held;
  for (const h of candidates) {
    if (free >= want.bytes) break;
    const total = byConn.get(h.conn) ?? 0;
    // A connection is cut only while it holds more than its share.
    if (total <= fairShare) continue;
    preempt.push(h.id);
    byConn.set(h.conn, total - h.bytes);
    free += h.bytes;
  }
  return free >= want.bytes ? { admit: true, preempt } : { admit: false, fairShare };
}

/**
 * declaredBody is what a request may hold while its body is read, from its head: its Content-Length
 * (Node stops the body there), `maxBody` for a chunked body (its reader stops there), and 0 for no
 * body or one declared over `maxBody`, which the app answers 413 at once without keeping a byte.
 */
export function declaredBody(headers: { 'content-length'?: string; 'transfer-encoding'?: string }, maxBody: number): number {
  if (headers['transfer-encoding'] !== undefined) return maxBody;
  const declared = Number(headers['content-length'] ?? 0);
  return Number.isFinite(declared) && declared > 0 && declared <= maxBody ? declared : 0;
}

/**
 * MIN_BODY_BYTES_PER_SECOND is the slowest a body may arrive after its grace: 1 MiB/s, so the largest
 * body (8 MiB) has 8 s more, inside the 10 s request timeout. The API server writes a review at once on
 * a connection of its own, over the cluster network: a body that comes slower than this is not a review.
 */
export const MIN_BODY_BYTES_PER_SECOND = 1024 * 1024;

/**
 * bodyDeadlineMs is how long after its head a body of `declared` bytes may take to arrive: a grace of
 * `bodyTimeoutMs`, spread over its second half (`random` in [0, 1), spreadDeadlineMs says why), plus
 * the time for its bytes at MIN_BODY_BYTES_PER_SECOND. Issue 46 §3.4: 300 connections each sending a
 * 64-byte body a byte a second held every slot of the socket table until the request timeout (10 s);
 * now each holds one for 1-2 s, and gives way sooner to a newcomer at the cap (socket-eviction.ts).
 */
export function bodyDeadlineMs(declared: number, bodyTimeoutMs: number, random: number): number {
  return spreadDeadlineMs(bodyTimeoutMs, random) + Math.ceil((declared * 1000) / MIN_BODY_BYTES_PER_SECOND);
}
