import { fakeTimers, flush } from '../../test/support/fake-timers.js';
import { Requeue, WorkQueue } from './queue.js';

describe('WorkQueue', () => {
  it('de-duplicates keys queued while waiting', async () => {
    const seen: string[] = [];
    let release!: () => void;
    const q = new WorkQueue(
      async (k) => {
        seen.push(k);
        if (k === 'busy') await new Promise<void>((r) => (release = r));
        return undefined;
      },
      { concurrency: 1 },
    );
    q.add('busy'); // occupies the only worker, so the keys below wait in the queue
    q.add('a');
    q.add('b');
    q.add('b');
    q.add('a');
    release();
    for (let i = 0; i < 5; i++) await flush();
    expect(seen.sort()).toEqual(['a', 'b', 'busy']);
  });

  it('serialises one key and re-runs it when it changed during processing', async () => {
    let release!: () => void;
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    const q = new WorkQueue(async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      runs++;
      if (runs === 1) await new Promise<void>((r) => (release = r));
      running--;
      return undefined;
    });
    q.add('k');
    await flush();
    q.add('k');
    q.add('k');
    release();
    await flush();
    await flush();
    expect(runs).toBe(2);
    expect(maxRunning).toBe(1);
  });

  it('retries failures with exponential backoff and re-runs after the returned delay', async () => {
    const t = fakeTimers();
    const calls: number[] = [];
    let n = 0;
    const retries: number[] = [];
    const q = new WorkQueue(
      async () => {
        calls.push(t.now());
        n++;
        if (n <= 3) throw new Error('transient');
        return n === 4 ? 5000 : undefined;
      },
      { baseBackoffMs: 100, maxBackoffMs: 250, timers: t.timers, onError: (_k, _e, ms) => retries.push(ms) },
    );
    q.add('k');
    await flush();
    await t.advance(100);
    await t.advance(200);
    await t.advance(250);
    await t.advance(5000);
    expect(retries).toEqual([100, 200, 250]);
    expect(calls).toEqual([0, 100, 300, 550, 5550]);
  });

  it('a Requeue (a lost optimistic race) runs again at once, outside the error backoff, and does not grow it', async () => {
    const t = fakeTimers();
    const calls: number[] = [];
    const errors: number[] = [];
    const requeues: string[] = [];
    let n = 0;
    const q = new WorkQueue(
      async () => {
        calls.push(t.now());
        n++;
        if (n === 1) throw new Error('transient');
        if (n === 2 || n === 3) throw new Requeue('partition is no longer 3');
        if (n === 4) throw new Error('transient again');
        return undefined;
      },
      { baseBackoffMs: 100, maxBackoffMs: 60_000, timers: t.timers, onError: (_k, _e, ms) => errors.push(ms), onRequeue: (_k, e) => requeues.push(e.message) },
    );
    q.add('k');
    await flush();
    await t.advance(100);
    await t.advance(0);
    await t.advance(200);
    expect(calls).toEqual([0, 100, 100, 100, 300]);
    expect(requeues).toEqual(['partition is no longer 3', 'partition is no longer 3']);
    // The error after the requeues continues the backoff it had (200 ms), not a reset nor a jump.
    expect(errors).toEqual([100, 200]);
  });

  it('keeps the earliest of two delayed adds', async () => {
    const t = fakeTimers();
    const calls: number[] = [];
    const q = new WorkQueue(async () => (calls.push(t.now()), undefined), { timers: t.timers });
    q.addAfter('k', 1000, 0);
    q.addAfter('k', 5000, 0);
    q.addAfter('k', 300, 0);
    await t.advance(6000);
    expect(calls).toEqual([300]);
  });

  it('stop waits for in-flight work and takes no more', async () => {
    let release!: () => void;
    const seen: string[] = [];
    const q = new WorkQueue(async (k) => {
      seen.push(k);
      if (k === 'slow') await new Promise<void>((r) => (release = r));
      return undefined;
    });
    q.add('slow');
    await flush();
    let stopped = false;
    const p = q.stop().then(() => (stopped = true));
    q.add('late');
    await flush();
    expect(stopped).toBe(false);
    release();
    await p;
    expect(seen).toEqual(['slow']);
  });
});
