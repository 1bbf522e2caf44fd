// Which sockets give way when the webhook's socket table is full. A pure decision over what the
// connection guard knows of each socket; connection-guard.ts closes what it names.

/** SocketState is what the eviction policy knows of one open socket. */
export interface SocketState {
  id: number;
  /** Requests whose head has arrived and whose response has not finished. */
  inFlight: number;
  /** Requests answered on this socket so far. */
  served: number;
  /** When the socket last became idle: accepted, or its last response finished (ms). */
  idleSince: number;
}

/** Eviction says which sockets to close, and whether the newcomer must be refused instead. */
export interface Eviction {
  evict: number[];
  refuseNewcomer: boolean;
}

/**
 * evictionRank orders idle sockets, first to go first: sockets that never carried a request (a silent
 * connection, or one still in its handshake) before kept-alive ones that did (the API server's pooled
 * connections, which it reuses between reviews), and within each the longest idle first.
 */
export function evictionRank(a: SocketState, b: SocketState): number {
  const used = Number(a.served > 0) - Number(b.served > 0);
  return used !== 0 ? used : a.idleSince - b.idleSince || a.id - b.id;
}

/**
 * chooseEvictions makes room for `newcomer` when `sockets` (which include it) exceed `cap`: idle sockets
 * (no request in flight) close, in evictionRank order, so that a full table of silent connections
 * cannot shut out the next caller. A socket with a request in flight is never closed for room (its
 * own deadlines bound it); when too few are idle, the newcomer is refused, as a plain cap would.
 */
export function chooseEvictions(sockets: readonly SocketState[], cap: number, newcomer: number): Eviction {
  const over = sockets.length - cap;
  if (over <= 0) return { evict: [], refuseNewcomer: false };
  // Called on every accept at the cap, so no sort: `over` is almost always 1.
  const evict: number[] = [];
  for (let k = 0; k < over; k++) {
    let best: SocketState | undefined;
    for (const s of sockets) {
      if (s.inFlight > 0 || s.id === newcomer || evict.includes(s.id)) continue;
      if (best === undefined || evictionRank(s, best) < 0) best = s;
    }
    if (best === undefined) break;
    evict.push(best.id);
  }
  return { evict, refuseNewcomer: evict.length < over };
}

/**
 * silentDeadlineMs is when a new socket that has not completed a request head is closed: at a random
 * point of the second half of `headerTimeoutMs` after its handshake (`random` in [0, 1)). Spread, not
 * one instant: a client that opens hundreds of sockets at once would otherwise see them all closed in
 * the same second and re-open them together, and the hundreds of handshakes of that burst (each a
 * private-key operation on the one event loop) queue every other caller's handshake behind them for
 * seconds. Spread, each re-opening costs a few milliseconds here and there.
 */
export function silentDeadlineMs(headerTimeoutMs: number, random: number): number {
  return Math.round(headerTimeoutMs * (0.5 + Math.min(Math.max(random, 0), 1) / 2));
}
