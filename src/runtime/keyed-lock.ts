// A per-key mutex for async work: callers of one key run one after another, in arrival order; other
// keys are not held up. The controller serializes the decisions of one rollout group with it, so two
// members can never both decide to step on views taken before the other's write.

/** KeyedLock runs async sections one at a time per key. */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  /** run waits for the sections of `key` queued before it, then runs `fn`; its result or error passes through. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    let release = () => {};
    const mine = new Promise<void>((r) => (release = r));
    const tail = before.then(() => mine);
    this.tails.set(key, tail);
    await before;
    try {
      return await fn();
    } finally {
      release();
      // The last one out removes the key, so the map holds only keys with work queued.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** size is the number of keys with a section running or waiting (for tests). */
  get size(): number {
    return this.tails.size;
  }
}
