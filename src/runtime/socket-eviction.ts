// Which sockets give way when a server's socket table is full. A pure decision over what the socket
// table knows of each socket; socket-table.ts closes what it names.

/** SocketState is what the eviction policy knows of one open socket. */
export interface SocketState {
  id: number;
  /** Requests whose head has arrived and whose response has not finished. */
  inFlight: number;
  /** Requests answered on this socket so far. */
  served: number;
  /** When the socket last became idle: accepted, or its last response finished (ms). */
  idleSince: number;
  /** A request whose body is still arriving: when its head arrived and when its body is due (ms). */
  body?: { since: number; dueAt: number };
}

/** Eviction says which sockets to close, and whether the newcomer must be refused instead. */
export interface Eviction {
  evict: number[];
  refuseNewcomer: boolean;
}

/** EvictionClock is when the choice is made and how long a new socket may take to send a request head. */
export interface EvictionClock {
  now: number;
  headerTimeoutMs: number;
}

/**
 * overdueShare is how much of its allowance a socket that owes the server something has used without
 * delivering it: a never-used socket its head (`headerTimeoutMs` from accept), a request its body
 * (until `body.dueAt`). Undefined for a socket that owes nothing: kept-alive and idle, or busy with a
 * request the server has whole.
 */
function overdueShare(s: SocketState, c: EvictionClock): number | undefined {
  if (s.body) return (c.now - s.body.since) / Math.max(1, s.body.dueAt - s.body.since);
  if (s.inFlight === 0 && s.served === 0) return (c.now - s.idleSince) / Math.max(1, c.headerTimeoutMs);
  return undefined;
}

/**
 * evictionRank orders the sockets that may be closed for room, first to go first. First the sockets that owe a request head or body, by the share of their
 * allowance used: a connection that has sent nothing for seconds, or a body still arriving long after
 * its head (the API server sends a review at once), goes before a caller in its handshake or a large
 * review that is arriving as fast as the network lets it. Then kept-alive idle sockets (the API
 * server's pooled connections, which it reuses between reviews), longest idle first. Never a socket
 * whose request has fully arrived and is being decided or answered.
 */
export function evictionRank(a: SocketState, b: SocketState, c: EvictionClock): number {
  const [da, db] = [overdueShare(a, c), overdueShare(b, c)];
  if (da !== undefined || db !== undefined) {
    if (da === undefined) return 1;
    if (db === undefined) return -1;
    return db - da || a.id - b.id;
  }
  return a.idleSince - b.idleSince || a.id - b.id;
}

/** evictable: idle, or still owing its request's body. */
const evictable = (s: SocketState): boolean => s.inFlight === 0 || s.body !== undefined;

/**
 * chooseEvictions makes room for `newcomer` when `sockets` (which include it) exceed `cap`: sockets
 * close in evictionRank order, so that neither a full table of silent connections nor one of bodies
 * sent a byte at a time can shut out the next caller. When too few may be closed (every other socket
 * carries a request the server has whole), the newcomer is refused, as a plain cap would.
 */
export function chooseEvictions(sockets: readonly SocketState[], cap: number, newcomer: number, clock: EvictionClock): Eviction {
  const over = sockets.length - cap;
  if (over <= 0) return { evict: [], refuseNewcomer: false };
  // Called on every accept at the cap, so no sort: `over` is almost always 1.
  const evict: number[] = [];
  for (let k = 0; k < over; k++) {
    let best: SocketState | undefined;
    for (const s of sockets) {
      if (!evictable(s) || s.id === newcomer || evict.includes(s.id)) continue;
      if (best === undefined || evictionRank(s, best, clock) < 0) best = s;
    }
    if (best === undefined) break;
    evict.push(best.id);
  }
  return { evict, refuseNewcomer: evict.length < over };
}

/**
 * spreadDeadlineMs is when a connection that has not delivered what it owes (a new socket its first
 * request head, a request its body) is closed: at a random point of the second half of `timeoutMs`
 * (`random` in [0, 1)). Spread, not one instant: a client that opens hundreds of sockets at once would
 * otherwise see them all closed in the same second and re-open them together, and the hundreds of
 * handshakes of that burst (each a private-key operation on the one event loop) queue every other
 * caller's handshake behind them for seconds. Spread, each re-opening costs a few milliseconds here and there.
 */
export function spreadDeadlineMs(timeoutMs: number, random: number): number {
  return Math.round(timeoutMs * (0.5 + Math.min(Math.max(random, 0), 1) / 2));
}
