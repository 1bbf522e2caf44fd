import { KeyedLock } from './keyed-lock.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('KeyedLock', () => {
  it('runs the sections of one key one at a time, in arrival order', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    let inside = 0;
    let most = 0;
    const section = (name: string) =>
      lock.run('g', async () => {
        inside++;
        most = Math.max(most, inside);
        log.push(`${name}+`);
        await tick();
        await tick();
        log.push(`${name}-`);
        inside--;
        return name;
      });
    expect(await Promise.all([section('a'), section('b'), section('c')])).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['a+', 'a-', 'b+', 'b-', 'c+', 'c-']);
    expect(most).toBe(1);
    expect(lock.size).toBe(0);
  });

  it('does not hold other keys up', async () => {
    const lock = new KeyedLock();
    let release = () => {};
    const slow = lock.run('g1', () => new Promise<void>((r) => (release = r)));
    let other = false;
    await lock.run('g2', async () => void (other = true));
    expect(other).toBe(true);
    release();
    await slow;
  });

  it('passes an error through and releases the key', async () => {
    const lock = new KeyedLock();
    await expect(lock.run('g', async () => { throw new Error('boom'); })).rejects.toThrow('boom');
    expect(await lock.run('g', async () => 'next')).toBe('next');
    expect(lock.size).toBe(0);
  });
});
