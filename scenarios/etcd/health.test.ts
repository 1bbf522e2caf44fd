import { describe, expect, it } from '@jest/globals';
import { failureOf, hasLeaderOf, healthFields, healthy, Settling } from './health.js';

describe('a member\'s health', () => {
  it.each([
    ['# HELP etcd_server_has_leader Whether or not a leader exists.\n# TYPE etcd_server_has_leader gauge\netcd_server_has_leader 1\n', 1],
    ['etcd_server_has_leader 0\n', 0],
    ['etcd_server_has_leader{member="a"} 1\n', 1],
    ['etcd_server_has_leader_changes 1\n', undefined],
    ['etcd_server_is_leader 1\n', undefined],
    ['', undefined],
  ])('hasLeaderOf %j = %s', (text, want) => expect(hasLeaderOf(text)).toBe(want));

  it('healthy: follows a leader and serves, both', () => {
    expect(healthy([
      { name: 'etcd-0', hasLeader: 1, served: true },
      { name: 'etcd-1', hasLeader: 1, served: false },
      { name: 'etcd-2', hasLeader: 0, served: true },
      { name: 'etcd-3', served: false },
    ])).toEqual(['etcd-0']);
  });

  it('failureOf: the last panic or fatal of the log, with its error; JSON lines only', () => {
    const log = [
      '{"level":"info","msg":"starting"}',
      '{"level":"panic","msg":"failed to open database","error":"invalid database"}',
      'panic: failed to open database',
      'goroutine 1 [running]:',
      '{"level":"panic","logger":"raft","msg":"tocommit(84) is out of range [lastIndex(40)]. Was the raft log corrupted, truncated, or lost?"}',
      '{"level":"fatal","msg":"cut sho',
    ].join('\n');
    expect(failureOf(log)).toBe('panic: tocommit(84) is out of range [lastIndex(40)]. Was the raft log corrupted, truncated, or lost?');
    expect(failureOf('{"level":"fatal","msg":"x","error":"y"}')).toBe('fatal: x (y)');
    expect(failureOf('{"level":"warn","msg":"x"}\n')).toBeUndefined();
    expect(failureOf('')).toBeUndefined();
  });
});

describe('Settling', () => {
  const all = ['etcd-0', 'etcd-1', 'etcd-2'];
  const two = ['etcd-0', 'etcd-1'];

  it('settled once neither the healthy set nor the rest changed for the quiet window; the time is the healthy set\'s last change', () => {
    const s = new Settling(90_000, 900_000);
    expect(s.look(0, all, 'a')).toBeUndefined();
    expect(s.look(2000, two, 'b')).toBeUndefined();
    expect(s.look(60_000, two, 'c')).toBeUndefined();
    expect(s.look(149_000, two, 'c')).toBeUndefined();
    expect(s.look(150_000, two, 'c')).toEqual({ healthy: two, lastChangeMs: 2000, settled: true });
  });

  it('a member that comes back moves the time on; the order of names does not matter', () => {
    const s = new Settling(10_000, 900_000);
    s.look(0, all, 'x');
    s.look(1000, two, 'x');
    s.look(50_000, ['etcd-2', 'etcd-0', 'etcd-1'], 'x');
    expect(s.look(55_000, all, 'x')).toBeUndefined();
    expect(s.look(60_000, ['etcd-1', 'etcd-2', 'etcd-0'], 'x')).toEqual({ healthy: ['etcd-1', 'etcd-2', 'etcd-0'], lastChangeMs: 50_000, settled: true });
  });

  it('nothing ever changed: settled after the window, at 0', () => {
    const s = new Settling(10_000, 900_000);
    expect(s.look(0, all, 'x')).toBeUndefined();
    expect(s.look(10_000, all, 'x')).toEqual({ healthy: all, lastChangeMs: 0, settled: true });
  });

  it('still changing at the bound: judged as it stands, not settled', () => {
    const s = new Settling(90_000, 300_000);
    for (let t = 0; t < 300_000; t += 30_000) expect(s.look(t, t % 60_000 ? two : all, `phase ${t}`)).toBeUndefined();
    expect(s.look(300_000, two, 'last')).toEqual({ healthy: two, lastChangeMs: 270_000, settled: false });
  });

  it('healthFields', () => {
    expect(healthFields({ healthy: two, lastChangeMs: 41_400, settled: true }, 3)).toBe('healthy_at_end=2/3 healthy_after_s=41');
    expect(healthFields({ healthy: all, lastChangeMs: 0, settled: false }, 3)).toBe('healthy_at_end=3/3 healthy_after_s=0');
  });
});
