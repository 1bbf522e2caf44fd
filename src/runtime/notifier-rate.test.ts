// The notifier at 1,000 pods, on a manual clock: a receiver that allows one message a second (answering
// 429 with Retry-After to anything faster) hears the whole rollout: every pod named exactly once, the
// start first and the completion last, never more than one message a second.
import { fakeTimers } from '../../test/support/fake-timers.js';
import { quietLog } from '../../test/support/quiet-log.js';
import type { Notification } from '../rollout/notify.js';
import { Notifier, retryAfterMs, type Destination, type PostResult } from './notifier.js';

const dest: Destination = { key: 'flag:0', resolve: async () => ({ url: 'http://127.0.0.1:1/hook', format: 'json' }) };
const msg = (kind: Notification['kind'], o: Partial<Notification> = {}): Notification => ({ kind, namespace: 'ns', statefulset: 'db', reason: '', message: kind, revision: 'r2', time: '', ...o });

/** limitedReceiver accepts at most one message per second; faster ones get 429 with Retry-After: 1. */
function limitedReceiver(now: () => number) {
  const delivered: { at: number; n: Notification }[] = [];
  const attempts: number[] = [];
  let lastAccepted = -Infinity;
  let refused = 0;
  const post = async (_url: string, body: string): Promise<PostResult> => {
    attempts.push(now());
    if (now() - lastAccepted < 1000) {
      refused++;
      return { status: 429, retryAfter: '1' };
    }
    lastAccepted = now();
    delivered.push({ at: now(), n: JSON.parse(body) as Notification });
    return { status: 204 };
  };
  return { post, delivered, attempts, refused: () => refused };
}

describe('Notifier at 1,000 pods', () => {
  it('tells a 1,000-pod rollout at one message a second: every pod once, start first, completion last', async () => {
    const clock = fakeTimers(0);
    const r = limitedReceiver(clock.now);
    const n = new Notifier({ log: quietLog().log, timeoutMs: 1000, minIntervalMs: 1000, post: r.post, now: clock.now, timers: clock.timers });
    n.notify(dest, msg('started'));
    // A fast rollout: a step every 100 ms, from db-999 down to db-0.
    for (let i = 999; i >= 0; i--) {
      n.notify(dest, msg('step', { pods: [`db-${i}`], partition: i }));
      await clock.advance(100);
    }
    n.notify(dest, msg('completed'));
    for (let k = 0; k < 600 && n.pending() > 0; k++) await clock.advance(1000);
    expect(n.pending()).toBe(0);

    const named = r.delivered.flatMap((d) => d.n.pods ?? []);
    expect(named).toHaveLength(1000);
    expect(new Set(named).size).toBe(1000);
    expect(r.delivered[0]?.n.kind).toBe('started');
    expect(r.delivered[r.delivered.length - 1]?.n.kind).toBe('completed');
    expect(r.delivered.every((d) => (d.n.pods?.length ?? 0) <= 50)).toBe(true);
    // Never more than one request a second, so the receiver never had to refuse one.
    for (let i = 1; i < r.attempts.length; i++) expect(r.attempts[i]! - r.attempts[i - 1]!).toBeGreaterThanOrEqual(1000);
    expect(r.refused()).toBe(0);
    console.log(`1,000-pod rollout: ${r.delivered.length} messages delivered (${r.delivered.length - 2} step messages, up to 50 pods each), 1000 pods named once, started first, completed last, ${r.refused()} refused; last message at t=${r.delivered[r.delivered.length - 1]!.at / 1000} s (the rollout's last step at t=100 s)`);
  });

  it('waits out a Retry-After before trying again', async () => {
    const clock = fakeTimers(0);
    const attempts: number[] = [];
    const post = async (): Promise<PostResult> => (attempts.push(clock.now()), attempts.length === 1 ? { status: 429, retryAfter: '7' } : { status: 204 });
    const n = new Notifier({ log: quietLog().log, timeoutMs: 1000, minIntervalMs: 1000, backoffMs: 10, post, now: clock.now, timers: clock.timers });
    n.notify(dest, msg('completed'));
    await clock.advance(30_000);
    expect(attempts).toEqual([0, 7000]);
  });

  it('a full queue drops step messages, never a start, completion or failure while a step can go', async () => {
    const clock = fakeTimers(0);
    const delivered: Notification[] = [];
    const post = async (_u: string, body: string): Promise<PostResult> => (delivered.push(JSON.parse(body) as Notification), { status: 204 });
    const n = new Notifier({ log: quietLog().log, timeoutMs: 1000, minIntervalMs: 1000, maxQueue: 4, post, now: clock.now, timers: clock.timers });
    // Steps of four StatefulSets (not mergeable with each other) around the terminal messages of one.
    n.notify(dest, msg('started', { statefulset: 'a' }));
    for (const s of ['b', 'c', 'd']) n.notify(dest, msg('step', { statefulset: s, pods: [`${s}-0`] }));
    n.notify(dest, msg('completed', { statefulset: 'a' }));
    n.notify(dest, msg('failed', { statefulset: 'e' }));
    n.notify(dest, msg('rolledBack', { statefulset: 'e' }));
    await clock.advance(20_000);
    // `started` was in flight at once; the queue of four then dropped the steps of b and c, oldest first.
    expect(delivered.map((d) => `${d.kind}:${d.statefulset}`)).toEqual(['started:a', 'step:d', 'completed:a', 'failed:e', 'rolledBack:e']);
  });

  it.each([
    ['5', 5000],
    [' 12 ', 12_000],
    ['0', 0],
    ['99999', 300_000],
    ['Thu, 01 Jan 1970 00:00:10 GMT', 10_000],
    ['Thu, 01 Jan 1970 00:00:00 GMT', 0],
    ['soon', undefined],
    ['-3', undefined],
    [undefined, undefined],
  ])('retryAfterMs(%j) at t=0 is %j', (h, want) => expect(retryAfterMs(h, 0)).toBe(want));
});
