import { admitBody, bodyDeadlineMs, declaredBody, type BodyHold } from './body-share.js';

const MiB = 1024 * 1024;
const CAP = 32 * MiB;
// id, connection, bytes, still reading, since (ms)
const hold = (id: number, conn: number, bytes: number, reading = true, since = id): BodyHold => ({ id, conn, bytes, reading, since });
// Four unfinished bodies of 8 MiB - 1 byte fill the pool.
const STALLED = [hold(1, 1, 8 * MiB - 1), hold(2, 2, 8 * MiB - 1), hold(3, 3, 8 * MiB - 1), hold(4, 4, 8 * MiB - 1)];

describe('admitBody', () => {
  it.each<[string, BodyHold[], { conn: number; bytes: number }, ReturnType<typeof admitBody>]>([
    ['room in the pool: admitted', [hold(1, 1, 8 * MiB)], { conn: 9, bytes: 8 * MiB }, { admit: true, preempt: [] }],
    ['a small review against four stalled 8 MiB bodies: the oldest of the largest gives way', STALLED, { conn: 9, bytes: 7000 }, { admit: true, preempt: [1] }],
    ['a 6 MiB review (under 32/5 MiB) against them: one gives way', STALLED, { conn: 9, bytes: 6 * MiB }, { admit: true, preempt: [1] }],
    ['a fifth 8 MiB body: above its share of 32/5 MiB, refused', STALLED, { conn: 9, bytes: 8 * MiB - 1 }, { admit: false, fairShare: Math.floor(CAP / 5) }],
    ['bodies already read (being decided) are not preempted', STALLED.map((h) => ({ ...h, reading: false })), { conn: 9, bytes: 7000 }, { admit: false, fairShare: Math.floor(CAP / 5) }],
    [
      'the largest connection gives way first, then its largest hold',
      [hold(1, 1, 4 * MiB), hold(2, 2, 6 * MiB), hold(3, 2, 10 * MiB, true, 0), hold(4, 3, 12 * MiB)],
      { conn: 9, bytes: 1 * MiB },
      { admit: true, preempt: [3] },
    ],
    [
      'a connection is cut only down to its share: its other hold stays, even if that leaves too little room',
      [hold(1, 1, 7 * MiB), hold(2, 1, 5 * MiB), hold(3, 2, 10 * MiB, false), hold(4, 3, 10 * MiB, false)],
      { conn: 9, bytes: 8 * MiB },
      { admit: false, fairShare: 8 * MiB },
    ],
    [
      'pipelined requests share one connection\'s share',
      [hold(1, 1, 8 * MiB), hold(2, 1, 8 * MiB), hold(3, 2, 16 * MiB)],
      { conn: 1, bytes: 1 * MiB },
      { admit: false, fairShare: 16 * MiB },
    ],
    ['nothing declared: always admitted', STALLED, { conn: 9, bytes: 0 }, { admit: true, preempt: [] }],
  ])('%s', (_name, holds, want, expected) => {
    expect(admitBody(holds, want, CAP)).toEqual(expected);
  });

  it('frees enough for the newcomer, taking several holds when one is not enough', () => {
    const holds = [hold(1, 1, 11 * MiB), hold(2, 2, 11 * MiB), hold(3, 3, 10 * MiB)];
    // Share 32/4 = 8 MiB: 8 MiB needs room from two connections above it.
    expect(admitBody(holds, { conn: 9, bytes: 8 * MiB }, CAP)).toEqual({ admit: true, preempt: [1] });
    expect(admitBody([...holds, hold(5, 5, 0)], { conn: 9, bytes: Math.floor(CAP / 5) }, CAP)).toMatchObject({ admit: true });
  });

  it('always admits a review of at most capacity / (holders + 1) bytes, whatever the others hold', () => {
    for (let n = 1; n <= 40; n++) {
      // n connections each stalled on as much as the pool would give it.
      const holds = Array.from({ length: n }, (_, i) => hold(i + 1, i + 1, Math.floor(CAP / n)));
      expect(admitBody(holds, { conn: 1000, bytes: Math.floor(CAP / (n + 1)) }, CAP)).toMatchObject({ admit: true });
    }
  });
});

describe('declaredBody', () => {
  it.each<[string, Record<string, string>, number]>([
    ['Content-Length', { 'content-length': '7000' }, 7000],
    ['no body', {}, 0],
    ['over the body limit: the app refuses it unread', { 'content-length': String(8 * MiB + 1) }, 0],
    ['exactly the body limit', { 'content-length': String(8 * MiB) }, 8 * MiB],
    ['chunked: as much as the reader allows', { 'transfer-encoding': 'chunked' }, 8 * MiB],
    ['not a number', { 'content-length': 'x' }, 0],
  ])('%s', (_name, headers, want) => {
    expect(declaredBody(headers, 8 * MiB)).toBe(want);
  });
});

describe('bodyDeadlineMs', () => {
  it.each<[string, number, number, number]>([
    ['a 64-byte body, earliest', 64, 0, 1001],
    ['a 64-byte body, latest', 64, 0.999, 2000],
    ['a 7 KB review', 7000, 0.5, 1507],
    ['the largest body: 8 s more, inside the 10 s request timeout', 8 * MiB, 0.999, 2000 + 8000 - 1],
  ])('%s', (_name, declared, random, want) => {
    expect(bodyDeadlineMs(declared, 2000, random)).toBe(want);
  });
});
