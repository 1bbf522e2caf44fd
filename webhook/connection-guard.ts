// Keeps one client from shutting out the others on the webhook's HTTPS port. It tracks every socket
// from TCP accept to close and every request body being read, asks the pure policies of
// socket-eviction.ts and body-share.ts who gives way, and closes what they name. Node's own limits
// (handshake, header and request timeouts, set in server.ts) bound how long a socket or a request
// may last; this bounds how much of the table and of the body memory one client can keep from others.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Server } from 'node:https';
import type { Socket } from 'node:net';
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../src/runtime/logger.js';
import { admitBody, declaredBody, type BodyHold } from './body-share.js';
import { chooseEvictions, silentDeadlineMs, type SocketState } from './socket-eviction.js';

/** GuardLimits are the socket cap and the body pool the guard enforces. */
export interface GuardLimits {
  maxConnections: number;
  /** A new socket's first request head must be complete by silentDeadlineMs of this after its handshake. */
  headerTimeoutMs: number;
  /** Bytes all bodies being read may declare together (the app's MAX_IN_FLIGHT_BYTES). */
  bodyPoolBytes: number;
  /** The app's body limit: a larger declared body is refused by the app without being held. */
  maxBodyBytes: number;
}

interface TrackedSocket extends SocketState {
  raw: Socket;
  /** The TLS socket over `raw`, once the handshake is done: closing it closes both. */
  tls?: Socket;
  /** Closes the socket if its first request head has not arrived in time. */
  silent?: NodeJS.Timeout;
}

interface Hold extends BodyHold {
  req: IncomingMessage;
  /** Preempted: its memory counts until its request has closed (then the app has let go of it too). */
  preempted?: Promise<void>;
}

/** ShedReason labels what the guard closed or refused. */
type ShedReason = 'silent-socket-closed' | 'idle-socket-evicted' | 'socket-refused' | 'body-preempted' | 'body-refused';

const peerKey = (s: Socket): string => `${s.remoteAddress ?? ''}:${s.remotePort ?? ''}`;

/** ConnectionGuard is the socket table and body pool of one HTTPS server. */
export class ConnectionGuard {
  private nextId = 1;
  private readonly sockets = new Map<number, TrackedSocket>();
  /** The same sockets by peer address: requests arrive on the TLS socket, not the TCP one accepted. */
  private readonly byPeer = new Map<string, TrackedSocket>();
  private readonly holds = new Map<number, Hold>();
  private readonly shed: Counter<'reason'>;

  constructor(
    private readonly limits: GuardLimits,
    private readonly log: Logger,
    registry: Registry,
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {
    this.shed = new Counter({
      name: 'phased_rollout_webhook_shed_total',
      help: 'Sockets and requests the webhook closed or refused to keep room for others, by reason (silent-socket-closed, idle-socket-evicted, socket-refused, body-preempted, body-refused).',
      labelNames: ['reason'],
      registers: [registry],
    });
  }

  /** openSockets is how many sockets are tracked (for tests). */
  get openSockets(): number {
    return this.sockets.size;
  }

  /**
   * attach tracks the sockets of `server`. Node's own maxConnections is one above the cap, as a
   * backstop: each socket accepted at the cap is followed at once by an eviction or its own close.
   */
  attach(server: Server): void {
    server.maxConnections = this.limits.maxConnections + 1;
    server.on('connection', (raw: Socket) => this.accept(raw));
    server.on('secureConnection', (tls: Socket) => {
      const s = this.byPeer.get(peerKey(tls));
      if (!s) return;
      s.tls = tls;
      if (s.inFlight > 0 || s.served > 0) return;
      // Node's headersTimeout would close it too, but all at one instant for sockets opened together.
      s.silent = setTimeout(() => {
        this.count('silent-socket-closed');
        tls.destroy();
      }, silentDeadlineMs(this.limits.headerTimeoutMs, this.random()));
      s.silent.unref();
    });
  }

  private accept(raw: Socket): void {
    const s: TrackedSocket = { id: this.nextId++, raw, inFlight: 0, served: 0, idleSince: this.now() };
    const key = peerKey(raw);
    this.sockets.set(s.id, s);
    this.byPeer.set(key, s);
    raw.once('close', () => {
      clearTimeout(s.silent);
      this.sockets.delete(s.id);
      if (this.byPeer.get(key) === s) this.byPeer.delete(key);
    });
    const { evict, refuseNewcomer } = chooseEvictions([...this.sockets.values()], this.limits.maxConnections, s.id);
    for (const id of evict) {
      this.count('idle-socket-evicted');
      const victim = this.sockets.get(id);
      (victim?.tls ?? victim?.raw)?.destroy();
    }
    if (refuseNewcomer) {
      this.count('socket-refused');
      this.log.debug({ open: this.sockets.size }, 'socket refused: every socket has a request in flight');
      raw.destroy();
    }
  }

  /** handler wraps the app: it counts the request on its socket and holds or refuses its body memory first. */
  handler(app: RequestListener): RequestListener {
    return (req, res) => {
      const s = this.byPeer.get(peerKey(req.socket));
      if (s) {
        clearTimeout(s.silent);
        s.inFlight++;
        res.once('close', () => {
          s.inFlight--;
          s.served++;
          s.idleSince = this.now();
        });
      }
      const bytes = declaredBody(req.headers, this.limits.maxBodyBytes);
      if (bytes === 0) return app(req, res);
      // A request on a socket the table lost (it closed meanwhile) is its own connection.
      const conn = s?.id ?? -this.nextId++;
      const decision = admitBody([...this.holds.values()], { conn, bytes }, this.limits.bodyPoolBytes);
      if (!decision.admit) return this.refuse(req, res, bytes, decision.fairShare);
      const preempted = decision.preempt.map((id) => this.preempt(id));
      const hold: Hold = { id: this.nextId++, conn, bytes, reading: true, since: this.now(), req };
      this.holds.set(hold.id, hold);
      req.once('end', () => (hold.reading = false));
      res.once('close', () => {
        if (!hold.preempted) this.holds.delete(hold.id);
      });
      if (preempted.length === 0) return app(req, res);
      // The app reads a body only once the preempted requests have closed and released their bytes,
      // so that its own in-flight bound never sees both.
      void Promise.all(preempted).then(() => {
        if (!req.destroyed) app(req, res);
      });
    };
  }

  /** preempt closes the connection of a hold whose body is still being read; resolves when its request has closed. */
  private preempt(id: number): Promise<void> {
    const h = this.holds.get(id);
    if (!h) return Promise.resolve();
    if (h.preempted) return h.preempted;
    // No longer a candidate, but its bytes count until its request has closed.
    h.reading = false;
    h.preempted = new Promise<void>((resolve) => {
      const release = () => {
        this.holds.delete(id);
        resolve();
      };
      if (h.req.destroyed) return release();
      h.req.once('close', release);
    });
    this.count('body-preempted');
    this.log.debug({ bytes: h.bytes, heldMs: this.now() - h.since }, 'unfinished body preempted to make room for another request');
    h.req.socket.destroy();
    return h.preempted;
  }

  private count(reason: ShedReason): void {
    this.shed.inc({ reason });
  }

  private refuse(req: IncomingMessage, res: ServerResponse, bytes: number, fairShare: number): void {
    this.count('body-refused');
    this.log.debug({ bytes, fairShare }, 'body refused: larger than its share of the in-flight pool');
    req.resume();
    const text = JSON.stringify({ error: `phased-rollout: a body of ${bytes} bytes is more than this connection's share (${fairShare} bytes) of the memory for requests being read; retry` });
    // Close: the unread body is not worth reading.
    res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), connection: 'close' }).end(text);
  }
}
