import { chooseEvictions, type SocketState } from './socket-eviction.js';

// id, requests in flight, requests served, idle since (ms)
const sock = (id: number, inFlight: number, served: number, idleSince: number): SocketState => ({ id, inFlight, served, idleSince });

describe('chooseEvictions', () => {
  // The newcomer is always the last socket, id 9, accepted at t=100.
  const NEW = sock(9, 0, 0, 100);
  it.each<[string, SocketState[], number, { evict: number[]; refuseNewcomer: boolean }]>([
    ['under the cap: nothing closes', [sock(1, 0, 0, 10), NEW], 3, { evict: [], refuseNewcomer: false }],
    ['at the cap exactly: nothing closes', [sock(1, 0, 0, 10), sock(2, 0, 0, 20), NEW], 3, { evict: [], refuseNewcomer: false }],
    ['over: the longest-idle silent socket goes', [sock(1, 0, 0, 20), sock(2, 0, 0, 10), NEW], 2, { evict: [2], refuseNewcomer: false }],
    ['a silent socket goes before a kept-alive one idle longer', [sock(1, 0, 3, 5), sock(2, 0, 0, 50), NEW], 2, { evict: [2], refuseNewcomer: false }],
    ['with no silent socket, the longest-idle kept-alive one goes', [sock(1, 0, 3, 30), sock(2, 0, 1, 20), NEW], 2, { evict: [2], refuseNewcomer: false }],
    ['a socket with a request in flight never goes, however old', [sock(1, 1, 0, 0), sock(2, 0, 2, 90), NEW], 2, { evict: [2], refuseNewcomer: false }],
    ['every other socket busy: the newcomer is refused', [sock(1, 1, 0, 0), sock(2, 2, 5, 0), NEW], 2, { evict: [], refuseNewcomer: true }],
    ['equal idle times: the older id goes', [sock(3, 0, 0, 10), sock(1, 0, 0, 10), NEW], 2, { evict: [1], refuseNewcomer: false }],
    ['two over (the cap was lowered) with one idle: it goes and the newcomer is refused', [sock(1, 1, 0, 0), sock(2, 0, 0, 10), sock(3, 1, 0, 0), NEW], 2, { evict: [2], refuseNewcomer: true }],
  ])('%s', (_name, sockets, cap, want) => {
    expect(chooseEvictions(sockets, cap, NEW.id)).toEqual(want);
  });

  it('keeps a fresh connection through a burst of silent ones as long as older silent sockets remain', () => {
    // 255 silent sockets, then a caller, then a burst of 100 silent ones: each arrival evicts one.
    let sockets: SocketState[] = Array.from({ length: 255 }, (_, i) => sock(i + 1, 0, 0, i));
    const caller = sock(1000, 0, 0, 500);
    sockets.push(caller);
    for (let i = 0; i < 100; i++) {
      const s = sock(2000 + i, 0, 0, 600 + i);
      sockets.push(s);
      const { evict } = chooseEvictions(sockets, 256, s.id);
      sockets = sockets.filter((x) => !evict.includes(x.id));
    }
    expect(sockets).toHaveLength(256);
    expect(sockets).toContainEqual(caller);
  });
});
