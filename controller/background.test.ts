import { describe, expect, it } from '@jest/globals';
import { FairSlots } from '../src/runtime/fair-slots.js';
import { Background, FRESH_MS, tokenOf } from './background.js';

/** A piece of work the test ends by hand. */
function hand<T>() {
  let end!: (v: T) => void;
  let fail!: (e: unknown) => void;
  const p = new Promise<T>((res, rej) => ((end = res), (fail = rej)));
  return { p, end, fail };
}

const tick = () => new Promise((r) => setImmediate(r));

function setup(limits = { total: 8, perTenant: 2 }) {
  let now = 0;
  const woken: string[] = [];
  const bg = new Background<string>(new FairSlots(limits), (k) => void woken.push(k), () => now);
  return { bg, woken, at: (t: number) => (now = t) };
}

describe('Background', () => {
  it('starts the work on the first ask, says it runs, and hands its value once to the same token', async () => {
    const { bg, woken } = setup();
    const w = hand<string>();
    let started = 0;
    const work = () => (started++, w.p);
    expect(bg.take('ns/a', 'ns', 't1', work)).toEqual({ pending: 'running' });
    expect(bg.take('ns/a', 'ns', 't1', work)).toEqual({ pending: 'running' });
    expect(started).toBe(1);
    w.end('pass');
    await tick();
    expect(woken).toEqual(['ns/a']);
    expect(bg.take('ns/a', 'ns', 't1', work)).toEqual({ value: 'pass', startedAtMs: 0, doneAtMs: 0 });
    // Taken: the next ask measures again.
    expect(bg.take('ns/a', 'ns', 't1', work)).toEqual({ pending: 'running' });
    expect(started).toBe(2);
  });

  it('never hands a result to another token, and never runs two works of one key at once: the new one starts when the old has ended (issue 46 §2.8)', async () => {
    const { bg, woken } = setup();
    const old = hand<string>();
    bg.take('ns/a', 'ns', 'pods-before', () => old.p);
    const again = hand<string>();
    let started = 0;
    const next = () => (started++, again.p);
    expect(bg.take('ns/a', 'ns', 'pods-after', next)).toEqual({ pending: 'running' });
    expect(bg.take('ns/a', 'ns', 'pods-after', next)).toEqual({ pending: 'running' });
    expect(started).toBe(0);
    old.end('pass for the old pods');
    await tick();
    // The old work's end wakes the key for the work that waited; its value is gone.
    expect(woken).toEqual(['ns/a']);
    expect(bg.take('ns/a', 'ns', 'pods-after', next)).toEqual({ pending: 'running' });
    expect(started).toBe(1);
    again.end('fail');
    await tick();
    expect(bg.take('ns/a', 'ns', 'pods-after', () => again.p)).toEqual({ value: 'fail', startedAtMs: 0, doneAtMs: 0 });
  });

  it('measures again when a result was left untaken for longer than FRESH_MS', async () => {
    const { bg, at } = setup();
    bg.take('ns/a', 'ns', 't', async () => 'old pass');
    await tick();
    at(FRESH_MS + 1);
    const w = hand<string>();
    expect(bg.take('ns/a', 'ns', 't', () => w.p)).toEqual({ pending: 'running' });
  });

  it('after a failure, the work is not started again before a backoff that doubles with each failure in a row', async () => {
    const { bg, at } = setup();
    let started = 0;
    const failing = async () => {
      started++;
      throw new Error('forbidden');
    };
    bg.take('ns/a', 'ns', 't', failing);
    await tick();
    expect(() => bg.take('ns/a', 'ns', 't', failing)).toThrow('forbidden');
    // Within 0.5 s: the same error, nothing started.
    at(400);
    expect(() => bg.take('ns/a', 'ns', 't', failing)).toThrow('forbidden');
    expect(started).toBe(1);
    at(600);
    expect(bg.take('ns/a', 'ns', 't', failing)).toEqual({ pending: 'running' });
    await tick();
    expect(() => bg.take('ns/a', 'ns', 't', failing)).toThrow('forbidden');
    // The second failure in a row: 1 s.
    at(1500);
    expect(() => bg.take('ns/a', 'ns', 't', failing)).toThrow('forbidden');
    expect(started).toBe(2);
    at(1700);
    bg.take('ns/a', 'ns', 't', async () => 'ok');
    await tick();
    expect(bg.take('ns/a', 'ns', 't', failing)).toMatchObject({ value: 'ok' });
  });

  it('a result ages from its end: a check that ran longer than FRESH_MS is handed over when it ends, with its start time (issue 46 §2.1)', async () => {
    let now = 0;
    const bg = new Background<string>(new FairSlots({ total: 4, perTenant: 4 }), () => undefined, () => now);
    const w = hand<string>();
    bg.take('ns/a', 'ns', 't', () => w.p);
    now = FRESH_MS + 5_000;
    w.end('slow fail');
    await tick();
    expect(bg.take('ns/a', 'ns', 't', () => hand<string>().p)).toEqual({ value: 'slow fail', startedAtMs: 0, doneAtMs: FRESH_MS + 5_000 });
  });

  it('throws a failed work to the reconcile that takes it', async () => {
    const { bg } = setup();
    const w = hand<string>();
    bg.take('ns/a', 'ns', 't', () => w.p);
    w.fail(new Error('the API refused'));
    await tick();
    expect(() => bg.take('ns/a', 'ns', 't', () => w.p)).toThrow('the API refused');
  });

  it('a namespace at its bound waits; another namespace starts at once; its turn comes when a slot frees', async () => {
    const { bg, woken } = setup({ total: 8, perTenant: 2 });
    const slow = Array.from({ length: 4 }, () => hand<string>());
    const got = slow.map((w, i) => bg.take(`a/s${i}`, 'a', 't', () => w.p));
    expect(got.map((g) => ('pending' in g ? g.pending : 'done'))).toEqual(['running', 'running', 'waiting', 'waiting']);
    expect(bg.take('b/db', 'b', 't', async () => 'fast')).toEqual({ pending: 'running' });
    await tick();
    expect(woken).toEqual(['b/db']);
    slow[0]!.end('late');
    await tick();
    expect(bg.take('a/s2', 'a', 't', () => slow[2]!.p)).toEqual({ pending: 'running' });
  });

  it('forget drops a waiting work before it starts', async () => {
    const { bg } = setup({ total: 1, perTenant: 1 });
    const first = hand<string>();
    bg.take('a/s0', 'a', 't', () => first.p);
    let ran = false;
    bg.take('a/s1', 'a', 't', async () => ((ran = true), 'x'));
    bg.forget('a/s1');
    first.end('done');
    await tick();
    await bg.idle();
    expect(ran).toBe(false);
    expect(bg.size()).toBe(1);
  });

  it('tokenOf is the same for equal parts and differs for any change', () => {
    expect(tokenOf('r@3#g', 'pods', { gates: [{ name: 'q', query: 'up' }] })).toBe(tokenOf('r@3#g', 'pods', { gates: [{ name: 'q', query: 'up' }] }));
    expect(tokenOf('r@3#g', 'pods', { gates: [] })).not.toBe(tokenOf('r@2#g', 'pods', { gates: [] }));
    expect(tokenOf('r@3#g', undefined, {})).not.toBe(tokenOf('r@3#g', 'pods', {}));
  });
});
