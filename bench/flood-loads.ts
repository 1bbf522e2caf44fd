// Loads that one tenant pod could put on the webhook port: silent TLS connections, bodies that never
// finish, JSON bombs (bench/admission-flood.ts runs them). Every loop is bounded in time and in count,
// stops by itself, and resolves only once each of its sockets has closed.
import { request } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type TLSSocket } from 'node:tls';

/** FloodTarget is where a load goes: the webhook's HTTPS port on 127.0.0.1 and the CA that signed it. */
export interface FloodTarget {
  port: number;
  ca: string;
}

/** FloodStats counts what a load did. */
export interface FloodStats {
  opened: number;
  /** Sockets that completed the TLS handshake. */
  secured: number;
  /** Sockets that failed (reset, refused) before they were closed by the load itself. */
  errors: number;
}

/** Flood is a running load: `done` resolves with its stats once every socket it opened has closed. */
export interface Flood {
  done: Promise<FloodStats>;
  /** stop ends the load early (it also ends by itself at its deadline). */
  stop: () => void;
}

interface LoopOptions {
  /** How many sockets the load keeps open. */
  sockets: number;
  /** How often closed sockets are re-opened. */
  reopenEveryMs: number;
  /** The load stops by itself after this long. */
  forMs: number;
  /** Upper bound on the sockets it may open in all. */
  maxOpens: number;
}

/**
 * keepOpen keeps `sockets` TLS connections open, re-opening closed ones every `reopenEveryMs`, and
 * hands each secured socket to `use`. The shared loop of the floods below.
 */
function keepOpen(t: FloodTarget, o: LoopOptions, use: (s: TLSSocket, reopen: () => void) => void): Flood {
  const live = new Set<TLSSocket>();
  const stats: FloodStats = { opened: 0, secured: 0, errors: 0 };
  let stopped = false;
  let release: (s: FloodStats) => void = () => undefined;
  const done = new Promise<FloodStats>((res) => (release = res));
  const settle = () => {
    if (stopped && live.size === 0) release(stats);
  };
  const open = () => {
    if (stopped || stats.opened >= o.maxOpens) return;
    stats.opened++;
    const s = connect({ host: '127.0.0.1', port: t.port, ca: t.ca, servername: 'localhost' });
    live.add(s);
    s.on('secureConnect', () => {
      stats.secured++;
      use(s, () => s.destroy());
    });
    s.on('error', () => {
      if (!stopped) stats.errors++;
    });
    s.on('close', () => {
      live.delete(s);
      settle();
    });
  };
  const tick = () => {
    for (let i = live.size; i < o.sockets; i++) open();
  };
  const timer = setInterval(tick, o.reopenEveryMs);
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    clearTimeout(deadline);
    for (const s of live) s.destroy();
    settle();
  };
  const deadline = setTimeout(stop, o.forMs);
  tick();
  return { done, stop };
}

/** idleFlood holds TLS connections that never send a byte: the socket table attack. */
export function idleFlood(t: FloodTarget, o: LoopOptions): Flood {
  return keepOpen(t, o, (s) => s.resume());
}

/**
 * unfinishedBodies sends the head of a POST /mutate declaring `declared` bytes and all of the body but
 * its last byte, then waits; when the server answers or closes, the socket is dropped and re-opened on
 * the next tick. Each such request holds nearly `declared` bytes of the server's in-flight memory.
 */
export function unfinishedBodies(t: FloodTarget, o: LoopOptions & { declared: number }): Flood {
  const body = Buffer.alloc(o.declared - 1, 0x78);
  body.write('{"pad":"');
  const head = `POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${o.declared}\r\n\r\n`;
  return keepOpen(t, o, (s, drop) => {
    s.once('data', drop);
    s.write(head);
    s.write(body);
  });
}

/**
 * slowBodies sends the head of a POST /mutate declaring `declared` bytes, then its body one byte every
 * `byteEveryMs`: a small request that is always arriving, so that it counts as in flight for as long
 * as the server lets it. When the server answers or closes, the socket is re-opened on the next tick.
 */
export function slowBodies(t: FloodTarget, o: LoopOptions & { declared: number; byteEveryMs: number }): Flood {
  const head = `POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${o.declared}\r\n\r\n`;
  return keepOpen(t, o, (s, drop) => {
    let sent = 0;
    const drip = setInterval(() => {
      if (sent < o.declared && !s.destroyed) s.write(sent++ === 0 ? '[' : ' ');
    }, o.byteEveryMs);
    s.once('close', () => clearInterval(drip));
    s.once('data', drop);
    s.write(head);
  });
}

/** postRaw posts `body` to /mutate on a fresh connection; the status, or 0 on a socket error, after `timeoutMs` or when `signal` aborts. */
export function postRaw(t: FloodTarget, body: string, timeoutMs: number, signal?: AbortSignal): Promise<number> {
  return new Promise((res) => {
    const req = request(
      { host: '127.0.0.1', port: t.port, path: '/mutate', method: 'POST', ca: t.ca, agent: false, signal, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (r) => {
        r.resume();
        r.on('end', () => res(r.statusCode ?? 0));
        r.on('error', () => res(0));
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy());
    req.on('error', () => res(0));
    req.end(body);
  });
}

/** BOMBS are the bodies of the 8 MiB JSON-bomb test: three `[{},{},...]` of 8 MiB and one 9 MiB string. */
export function bombs(): string[] {
  const bomb = `[${'{},'.repeat(Math.floor((8 * 1024 * 1024 - 2) / 3) - 1)}{}]`;
  return [bomb, bomb, bomb, `{"pad":"${'x'.repeat(9 * 1024 * 1024)}"}`];
}

/**
 * bombRounds posts the bombs together every `everyMs`, `rounds` times at most, within `forMs` or until
 * `signal` aborts; resolves with every status seen.
 */
export async function bombRounds(t: FloodTarget, o: { rounds: number; everyMs: number; forMs: number; signal?: AbortSignal }): Promise<number[]> {
  const bodies = bombs();
  const statuses: number[] = [];
  const end = Date.now() + o.forMs;
  for (let i = 0; i < o.rounds && Date.now() < end && !o.signal?.aborted; i++) {
    const started = Date.now();
    statuses.push(...(await Promise.all(bodies.map((b) => postRaw(t, b, Math.max(1000, end - Date.now()), o.signal)))));
    const wait = Math.min(o.everyMs - (Date.now() - started), end - Date.now());
    if (wait > 0) await sleep(wait, undefined, { signal: o.signal }).catch(() => undefined);
  }
  return statuses;
}
