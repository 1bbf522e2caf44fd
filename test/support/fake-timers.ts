// A manual clock for code that takes injectable Timers and a `now`: timers fire only when the test
// advances time, in order, with the promise queue flushed after each.
import type { Timers } from '../../src/runtime/queue.js';

/** flush lets pending promise callbacks and I/O run. */
export const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

/** fakeTimers returns timers, a clock and `advance(ms)` that fires what falls due. */
export function fakeTimers(start = 0) {
  let now = start;
  const pending: { at: number; fn: () => void; id: number }[] = [];
  let id = 0;
  const timers: Timers = {
    set: (fn, ms) => {
      pending.push({ at: now + ms, fn, id: ++id });
      return id;
    },
    clear: (t) => {
      const i = pending.findIndex((p) => p.id === t);
      if (i >= 0) pending.splice(i, 1);
    },
  };
  const advance = async (ms: number): Promise<void> => {
    const end = now + ms;
    for (;;) {
      await flush();
      pending.sort((a, b) => a.at - b.at);
      const next = pending[0];
      if (!next || next.at > end) break;
      pending.shift();
      now = next.at;
      next.fn();
    }
    now = end;
    await flush();
  };
  return { timers, advance, now: () => now, pending: () => pending.length };
}
