import { describe, expect, it } from '@jest/globals';
import { FairSlots } from './fair-slots.js';

/** A task the test ends by hand. */
function gate() {
  let end!: () => void;
  const p = new Promise<void>((r) => (end = r));
  return { p, end };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('FairSlots', () => {
  it('runs at most perTenant of one tenant; another tenant starts at once', async () => {
    const s = new FairSlots({ total: 10, perTenant: 2 });
    const started: string[] = [];
    const gates = Array.from({ length: 5 }, () => gate());
    gates.forEach((g, i) => s.submit('a', () => (started.push(`a${i}`), g.p)));
    s.submit('b', async () => void started.push('b0'));
    expect(started).toEqual(['a0', 'a1', 'b0']);
    await tick();
    // b0 is done; a's third waits for one of a's two.
    expect(s.stats()).toEqual({ running: 2, waiting: 3 });
    gates[0]!.end();
    await tick();
    expect(started).toEqual(['a0', 'a1', 'b0', 'a2']);
  });

  it('serves waiting tenants in turn when the total bound frees a slot', async () => {
    const s = new FairSlots({ total: 2, perTenant: 2 });
    const started: string[] = [];
    const hold = [gate(), gate()];
    s.submit('a', () => (started.push('a0'), hold[0]!.p));
    s.submit('a', () => (started.push('a1'), hold[1]!.p));
    // a queues 4 more, then b one and c one: b and c must not wait behind all of a's.
    for (let i = 2; i < 6; i++) s.submit('a', () => (started.push(`a${i}`), new Promise(() => undefined)));
    s.submit('b', () => (started.push('b0'), new Promise(() => undefined)));
    s.submit('c', () => (started.push('c0'), new Promise(() => undefined)));
    hold[0]!.end();
    await tick();
    hold[1]!.end();
    await tick();
    // After a's first two: the next turns go a (it was first in line), then b; c is next.
    expect(started.slice(2)).toEqual(['a2', 'b0']);
  });

  it('keeps the total bound', async () => {
    const s = new FairSlots({ total: 3, perTenant: 3 });
    let running = 0;
    let most = 0;
    const all: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      const done = gate();
      all.push(done.p);
      s.submit(`t${i % 4}`, async () => {
        running++;
        most = Math.max(most, running);
        await tick();
        running--;
        done.end();
      });
    }
    await Promise.all(all);
    expect(most).toBe(3);
    expect(s.stats()).toEqual({ running: 0, waiting: 0 });
  });

  it('frees the slot of a task that throws or rejects', async () => {
    const s = new FairSlots({ total: 1, perTenant: 1 });
    const started: string[] = [];
    s.submit('a', () => {
      throw new Error('boom');
    });
    s.submit('a', () => Promise.reject(new Error('no')).finally(() => started.push('a1')));
    await tick();
    s.submit('a', async () => void started.push('a2'));
    await tick();
    expect(started).toEqual(['a1', 'a2']);
  });

  it('never starts a cancelled task, and its place goes to the next', async () => {
    const s = new FairSlots({ total: 1, perTenant: 1 });
    const started: string[] = [];
    const first = gate();
    s.submit('a', () => first.p);
    const t = s.submit('a', async () => void started.push('cancelled'));
    s.submit('b', async () => void started.push('b'));
    t.cancel();
    expect(s.stats().waiting).toBe(1);
    first.end();
    await tick();
    expect(started).toEqual(['b']);
  });

  it('refuses bounds under 1', () => {
    expect(() => new FairSlots({ total: 0, perTenant: 1 })).toThrow(/at least 1/);
  });
});
