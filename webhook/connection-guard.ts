// Keeps one client from shutting out the others on the webhook's HTTPS port. Its socket table
// (src/runtime/socket-table.ts, shared with the operations port) bounds the sockets one client can hold;
// this adds what is particular to admission requests: every request body being read holds memory
// from a pool, and the pure policy of body-share.ts says who gives way when it is short; and a body
// must arrive within its own deadline, well inside Node's request timeout (set in server.ts).
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Server } from 'node:https';
import { Counter, type Registry } from 'prom-client';
import type { Logger } from '../src/runtime/logger.js';
import { SocketTable, type SocketLimits, type SocketShedReason } from '../src/runtime/socket-table.js';
import { admitBody, bodyDeadlineMs, declaredBody, type BodyHold } from './body-share.js';

/** GuardLimits are the socket cap, the body deadline and the body pool the guard enforces. */
export interface GuardLimits extends Pick<SocketLimits, 'maxConnections' | 'headerTimeoutMs'> {
  /** A body must have arrived by bodyDeadlineMs of this and its declared length after its head. */
  bodyTimeoutMs: number;
  /** Bytes all bodies being read may declare together (the app's MAX_IN_FLIGHT_BYTES). */
  bodyPoolBytes: number;
  /** The app's body limit: a larger declared body is refused by the app without being held. */
  maxBodyBytes: number;
}

interface Hold extends BodyHold {
  req: IncomingMessage;
  /** Preempted: its memory counts until its request has closed (then the app has let go of it too). */
  preempted?: Promise<void>;
}

/** ShedReason labels what the guard closed or refused. */
type ShedReason = SocketShedReason | 'body-preempted' | 'body-refused';

/** ConnectionGuard is the socket table and body pool of one HTTPS server. */
export class ConnectionGuard {
  private nextId = 1;
  private readonly table: SocketTable;
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
      help: 'Sockets and requests the webhook closed or refused to keep room for others, by reason (silent-socket-closed, idle-socket-evicted, socket-refused, slow-body-closed, slow-body-evicted, body-preempted, body-refused).',
      labelNames: ['reason'],
      registers: [registry],
    });
    this.table = new SocketTable(
      limits,
      (reason, open) => {
        this.count(reason);
        if (reason === 'socket-refused') log.debug({ open }, 'socket refused: every socket carries a request the webhook has whole');
      },
      now,
      random,
    );
  }

  /** openSockets is how many sockets are tracked (for tests). */
  get openSockets(): number {
    return this.table.openSockets;
  }

  /** attach tracks the sockets of `server`. */
  attach(server: Server): void {
    this.table.attach(server);
  }

  /** handler wraps the app: it counts the request on its socket, holds or refuses its body memory and sets its body deadline. */
  handler(app: RequestListener): RequestListener {
    return (req, res) => {
      const socket = this.table.track(req, res);
      const bytes = declaredBody(req.headers, this.limits.maxBodyBytes);
      if (bytes === 0) return app(req, res);
      // A request on a socket the table lost (it closed meanwhile) is its own connection.
      const conn = socket ?? -this.nextId++;
      const decision = admitBody([...this.holds.values()], { conn, bytes }, this.limits.bodyPoolBytes);
      if (!decision.admit) return this.refuse(req, res, bytes, decision.fairShare);
      this.table.expectBody(req, res, bodyDeadlineMs(bytes, this.limits.bodyTimeoutMs, this.random()));
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
