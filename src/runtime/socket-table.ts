// Keeps one client from holding every socket of an HTTP or HTTPS server: the webhook's port 9443 and
// the operations port of both processes. It tracks every socket from TCP accept to close and every
// request on it, asks the pure policy of socket-eviction.ts who gives way at the cap, and closes what
// it names, a socket that sends no request head in time, and a request whose body is overdue. Node's
// own limits (serverLimits below) bound how long a head or a whole request may take.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Server, Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import { chooseEvictions, spreadDeadlineMs, type SocketState } from './socket-eviction.js';

/** SocketLimits bound what one client can hold of a server's sockets and time. */
export interface SocketLimits {
  /** Open sockets; at the cap a socket that owes a request head or body, or an idle one, is closed for a new one. */
  maxConnections: number;
  /** A request head must be complete this long after the handshake (TLS) or accept, or after its first byte on a kept-alive socket. */
  headerTimeoutMs: number;
  /** A whole request, head and body, must have arrived this long after its first byte. */
  requestTimeoutMs: number;
}

/**
 * CONNECTIONS_CHECK_MS is how often Node enforces the header and request timeouts. Its default of
 * 30 s let a 10 s header timeout hold a silent socket for up to 40 s; a sweep of 256 sockets a second
 * costs nothing.
 */
export const CONNECTIONS_CHECK_MS = 1_000;

/**
 * serverLimits are the options of http.createServer and https.createServer that apply `l` (they cannot
 * be set after). Node refuses a header timeout above the request timeout with a less helpful message.
 */
export function serverLimits(l: SocketLimits): { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number } {
  if (l.headerTimeoutMs > l.requestTimeoutMs) throw new Error(`the request header timeout (${l.headerTimeoutMs} ms) must not exceed the request timeout (${l.requestTimeoutMs} ms)`);
  return { headersTimeout: l.headerTimeoutMs, requestTimeout: l.requestTimeoutMs, connectionsCheckingInterval: CONNECTIONS_CHECK_MS };
}

/** SocketShedReason labels what the table closed or refused. */
export type SocketShedReason = 'silent-socket-closed' | 'idle-socket-evicted' | 'socket-refused' | 'slow-body-closed' | 'slow-body-evicted';

interface TrackedSocket extends SocketState {
  raw: Socket;
  /** The TLS socket over `raw`, once the handshake is done: closing it closes both. */
  tls?: Socket;
  /** Closes the socket if its first request head has not arrived in time. */
  silent?: NodeJS.Timeout;
}

const peerKey = (s: Socket): string => `${s.remoteAddress ?? ''}:${s.remotePort ?? ''}`;

/** SocketTable is the socket table of one server. */
export class SocketTable {
  private nextId = 1;
  private readonly sockets = new Map<number, TrackedSocket>();
  /** The same sockets by peer address: on HTTPS requests arrive on the TLS socket, not the TCP one accepted. */
  private readonly byPeer = new Map<string, TrackedSocket>();
  /** The server speaks TLS: a socket owes its first head from the end of its handshake, not from accept. */
  private secure = false;

  constructor(
    private readonly limits: Pick<SocketLimits, 'maxConnections' | 'headerTimeoutMs'>,
    /** Told of every socket or request closed or refused (a metric, a debug line). */
    private readonly shed: (reason: SocketShedReason, open: number) => void,
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  /** openSockets is how many sockets are tracked. */
  get openSockets(): number {
    return this.sockets.size;
  }

  /**
   * attach tracks the sockets of `server` (HTTP or HTTPS). Node's own maxConnections is one above the
   * cap, as a backstop: each socket accepted at the cap is followed at once by an eviction or its own close.
   */
  attach(server: Server): void {
    server.maxConnections = this.limits.maxConnections + 1;
    server.on('connection', (raw: Socket) => this.accept(raw));
    this.secure = server instanceof TlsServer;
    if (!this.secure) return;
    server.on('secureConnection', (tls: Socket) => {
      const s = this.byPeer.get(peerKey(tls));
      if (!s) return;
      s.tls = tls;
      this.awaitHead(s);
    });
  }

  /** awaitHead closes a socket whose first request head has not arrived by its spread deadline. */
  private awaitHead(s: TrackedSocket): void {
    if (s.inFlight > 0 || s.served > 0) return;
    // Node's headersTimeout would close it too, but all at one instant for sockets opened together.
    s.silent = setTimeout(() => {
      this.shed('silent-socket-closed', this.sockets.size);
      (s.tls ?? s.raw).destroy();
    }, spreadDeadlineMs(this.limits.headerTimeoutMs, this.random()));
    s.silent.unref();
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
    const { evict, refuseNewcomer } = chooseEvictions([...this.sockets.values()], this.limits.maxConnections, s.id, { now: this.now(), headerTimeoutMs: this.limits.headerTimeoutMs });
    for (const id of evict) {
      const victim = this.sockets.get(id);
      this.shed(victim?.body ? 'slow-body-evicted' : 'idle-socket-evicted', this.sockets.size);
      (victim?.tls ?? victim?.raw)?.destroy();
    }
    if (refuseNewcomer) {
      this.shed('socket-refused', this.sockets.size);
      raw.destroy();
      return;
    }
    if (!this.secure) this.awaitHead(s);
  }

  /**
   * track counts `req` on its socket until its response has closed; it returns the socket's id, or
   * undefined for a socket the table lost (it closed meanwhile).
   */
  track(req: IncomingMessage, res: ServerResponse): number | undefined {
    const s = this.byPeer.get(peerKey(req.socket));
    if (!s) return undefined;
    clearTimeout(s.silent);
    s.inFlight++;
    res.once('close', () => {
      s.inFlight--;
      s.served++;
      s.idleSince = this.now();
    });
    return s.id;
  }

  /**
   * expectBody closes the connection of `req` unless its body has fully arrived `allowMs` after now,
   * and until then lets it give way at the cap by how much of that time it has used (socket-eviction.ts).
   */
  expectBody(req: IncomingMessage, res: ServerResponse, allowMs: number): void {
    const s = this.byPeer.get(peerKey(req.socket));
    if (!s) return;
    const since = this.now();
    const body = { since, dueAt: since + allowMs };
    s.body = body;
    const overdue = setTimeout(() => {
      this.shed('slow-body-closed', this.sockets.size);
      req.socket.destroy();
    }, allowMs);
    overdue.unref();
    const arrived = () => {
      clearTimeout(overdue);
      if (s.body === body) delete s.body;
    };
    req.once('end', arrived);
    res.once('close', arrived);
  }

  /** handler wraps a listener so that the table counts each request on its socket. */
  handler(listener: RequestListener): RequestListener {
    return (req, res) => {
      this.track(req, res);
      listener(req, res);
    };
  }
}
