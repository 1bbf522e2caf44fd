import { chooseEvictions, spreadDeadlineMs, type SocketState } from './socket-eviction.js';

// id, requests in flight, requests served, idle since (ms), and a body still arriving: [since, due] (ms)
const sock = (id: number, inFlight: number, served: number, idleSince: number, body?: [number, number]): SocketState => ({ id, inFlight, served, idleSince, ...(body ? { body: { since: body[0], dueAt: body[1] } } : {}) });
// The choice is made at t=100; a new socket may take 5,000 ms for its first head.
const CLOCK = { now: 100, headerTimeoutMs: 5000 };

describe('chooseEvictions', () => {
  // The newcomer is always the last socket, id 9, accepted at t=100.
  const NEW = sock(9, 0, 0, 100);
  it.each<[string, SocketState[], number, { evict: number[]; refuseNewcomer: boolean }]>([
    ['under the cap: nothing closes', [sock(1, 0, 0, 10), NEW], 3, { evict: [], refuseNewcomer: false }],
    ['at the cap exactly: nothing closes', [sock(1, 0, 0, 10), sock(2, 0, 0, 20), NEW], 3, { evict: [], refuseNewcomer: false }],
    ['over: the longest-idle silent socket goes', [sock(1, 0, 0, 20), sock(2, 0, 0, 10), NEW], 2, { evict: [2], refuseNewcomer: false }],
    ['a silent socket goes before a kept-alive one idle longer', [sock(1, 0, 3, 5), sock(2, 0, 0, 50), NEW], 2, { evict: [2], refuseNewcomer: false }],
    ['with no silent socket, the longest-idle kept-alive one goes', [sock(1, 0, 3, 30), sock(2, 0, 1, 20), NEW], 2, { evict: [2], refuseNewcomer: false }],
    ['a socket whose request has fully arrived never goes, however old', [sock(1, 1, 0, 0), sock(2, 0, 2, 90), NEW], 2, { evict: [2], refuseNewcomer: false }],
    ['every other socket busy with a whole request: the newcomer is refused', [sock(1, 1, 0, 0), sock(2, 2, 5, 0), NEW], 2, { evict: [], refuseNewcomer: true }],
    ['equal idle times: the older id goes', [sock(3, 0, 0, 10), sock(1, 0, 0, 10), NEW], 2, { evict: [1], refuseNewcomer: false }],
    ['two over (the cap was lowered) with one idle: it goes and the newcomer is refused', [sock(1, 1, 0, 0), sock(2, 0, 0, 10), sock(3, 1, 0, 0), NEW], 2, { evict: [2], refuseNewcomer: true }],
    // Issue 46 §3.4: bodies sent a byte a second filled the table and every newcomer was refused.
    ['every other socket still reading a body: the one nearest its deadline goes', [sock(1, 1, 0, 0, [0, 1000]), sock(2, 1, 0, 0, [50, 250]), sock(3, 1, 0, 0, [90, 1090]), NEW], 3, { evict: [2], refuseNewcomer: false }],
    ['a slow body goes before a kept-alive idle socket', [sock(1, 0, 4, 0), sock(2, 1, 0, 0, [60, 1060]), NEW], 2, { evict: [2], refuseNewcomer: false }],
    ['a body far into its allowance goes before a caller just past its handshake', [sock(1, 0, 0, 95), sock(2, 1, 0, 0, [0, 1000]), NEW], 2, { evict: [2], refuseNewcomer: false }],
    ['a silent socket far into its header time goes before a body just begun', [sock(1, 0, 0, -4000), sock(2, 1, 0, 0, [99, 1099]), NEW], 2, { evict: [1], refuseNewcomer: false }],
    ['a large body arriving within its allowance stays while a small one is overdue', [sock(1, 1, 0, 0, [0, 9000]), sock(2, 1, 0, 0, [80, 1080]), sock(3, 1, 0, 0, [20, 120]), NEW], 3, { evict: [3], refuseNewcomer: false }],
  ])('%s', (_name, sockets, cap, want) => {
    expect(chooseEvictions(sockets, cap, NEW.id, CLOCK)).toEqual(want);
  });

  it('keeps a fresh connection through a burst of silent ones as long as older silent sockets remain', () => {
    // 255 silent sockets, then a caller, then a burst of 100 silent ones: each arrival evicts one.
    let sockets: SocketState[] = Array.from({ length: 255 }, (_, i) => sock(i + 1, 0, 0, i));
    const caller = sock(1000, 0, 0, 500);
    sockets.push(caller);
    for (let i = 0; i < 100; i++) {
      const s = sock(2000 + i, 0, 0, 600 + i);
      sockets.push(s);
      const { evict } = chooseEvictions(sockets, 256, s.id, { now: 700, headerTimeoutMs: 5000 });
      sockets = sockets.filter((x) => !evict.includes(x.id));
    }
    expect(sockets).toHaveLength(256);
    expect(sockets).toContainEqual(caller);
  });

  it('keeps a caller in its handshake through a burst of re-opened sockets while slow bodies fill the table', () => {
    // 256 bodies sent a byte a second (each due 1 s after its head), a caller accepted at t=1000, then
    // 50 re-opened attackers each sending its head 10 ms after it was accepted.
    let sockets: SocketState[] = Array.from({ length: 255 }, (_, i) => sock(i + 1, 1, 0, i, [i + 5, i + 1005]));
    const caller = sock(1000, 0, 0, 1000);
    sockets.push(caller);
    for (let i = 0; i < 50; i++) {
      const t = 1001 + i;
      const s = sock(2000 + i, 0, 0, t);
      sockets.push(s);
      const { evict, refuseNewcomer } = chooseEvictions(sockets, 256, s.id, { now: t, headerTimeoutMs: 5000 });
      expect(refuseNewcomer).toBe(false);
      sockets = sockets.filter((x) => !evict.includes(x.id)).map((x) => (x.id >= 2000 && t - x.idleSince >= 10 && !x.body ? sock(x.id, 1, 0, x.idleSince, [t, t + 1000]) : x));
    }
    expect(sockets).toContainEqual(caller);
  });
});

describe('spreadDeadlineMs', () => {
  it.each([
    [0, 2500],
    [0.5, 3750],
    [0.999, 4998],
    [-1, 2500],
    [2, 5000],
  ])('random %p of 5,000 ms: %p ms', (random, want) => {
    expect(spreadDeadlineMs(5000, random)).toBe(want);
  });
});
