import { erfc, exactUpperTail, mannWhitneyGreater, ranks, upperNormal } from './mann-whitney.js';

/** enumerate is P(U >= u) by listing every way to pick which pooled ranks belong to the first sample. */
function enumerate(u: number, m: number, n: number): number {
  let hit = 0;
  let all = 0;
  const total = m + n;
  for (let mask = 0; mask < 1 << total; mask++) {
    let bits = 0;
    let rankSum = 0;
    for (let k = 0; k < total; k++) if (mask & (1 << k)) (bits++, (rankSum += k + 1));
    if (bits !== m) continue;
    all++;
    if (rankSum - (m * (m + 1)) / 2 >= u) hit++;
  }
  return hit / all;
}

/** mulberry32: a seeded generator, so the distribution tests draw the same numbers on every run. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const normal = (r: () => number) => () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
const draw = (f: () => number, n: number, shift = 0) => Array.from({ length: n }, () => f() + shift);

describe('ranks', () => {
  it.each([
    [[3, 1, 2], [3, 1, 2], 0],
    [[5, 5, 1], [2.5, 2.5, 1], 6],
    [[7, 7, 7], [2, 2, 2], 24],
  ])('%j ranks as %j (tie term %i)', (values, want, tie) => expect(ranks(values)).toEqual({ ranks: want, tieTerm: tie }));
});

describe('exactUpperTail', () => {
  it('is 1/20 for three values above three others (C(6,3) = 20 orderings)', () => expect(exactUpperTail(9, 3, 3)).toBeCloseTo(0.05, 12));
  it.each([
    [0, 2, 2],
    [3, 3, 4],
    [6, 3, 4],
    [10, 5, 4],
    [1, 1, 6],
    [13, 5, 5],
  ])('P(U >= %i) for %i against %i matches the enumeration of every split', (u, m, n) => expect(exactUpperTail(u, m, n)).toBeCloseTo(enumerate(u, m, n), 12));
});

describe('the normal approximation', () => {
  it.each([
    [0, 0.5],
    [1.6448536, 0.05],
    [1.959964, 0.025],
    [2.5758293, 0.005],
    [-1.959964, 0.975],
  ])('P(Z >= %d) = %d', (z, p) => expect(upperNormal(z)).toBeCloseTo(p, 6));
  it('erfc(0) = 1 and erfc(-x) = 2 - erfc(x)', () => {
    expect(erfc(0)).toBeCloseTo(1, 7);
    expect(erfc(-0.7)).toBeCloseTo(2 - erfc(0.7), 12);
  });
  it('agrees with the exact distribution at 20 against 20 to within 0.005', () => {
    for (const u of [150, 200, 250, 280, 300]) {
      const z = (u - 200 - 0.5) / Math.sqrt((400 * 41) / 12);
      expect(Math.abs(upperNormal(z) - exactUpperTail(u, 20, 20))).toBeLessThan(0.005);
    }
  });
  it('one tie moves p only a little from the exact value without it', () => {
    const a = [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21];
    const b = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10.5, 22, 23];
    const tied = [...b.slice(0, 9), 10, 22, 23];
    expect(Math.abs(mannWhitneyGreater(a, tied).p - mannWhitneyGreater(a, b).p)).toBeLessThan(0.01);
  });
});

describe('mannWhitneyGreater', () => {
  it('three values above three others: U = 9, p = 0.05 exactly', () => expect(mannWhitneyGreater([4, 5, 6], [1, 2, 3])).toEqual({ u: 9, p: expect.closeTo(0.05, 12) as unknown as number, method: 'exact' }));
  it('the other direction: p = 1', () => expect(mannWhitneyGreater([1, 2, 3], [4, 5, 6]).p).toBeCloseTo(1, 12));
  it('one repeated value everywhere: no spread, p = 1', () => expect(mannWhitneyGreater([2, 2, 2, 2], [2, 2, 2])).toMatchObject({ p: 1, method: 'normal' }));
  it('an empty side proves nothing: p = 1', () => expect(mannWhitneyGreater([], [1, 2]).p).toBe(1));
  it('ties use the normal approximation (U counts a tie as one half)', () => {
    const r = mannWhitneyGreater([1, 2, 2, 3], [2, 0, 0, 0]);
    expect(r.method).toBe('normal');
    expect(r.u).toBe(14); // 3 + (6 + 2 halves) + 4 pairs in which the first value is greater
    expect(r.p).toBeGreaterThan(0);
    expect(r.p).toBeLessThan(0.1);
  });

  // Samples drawn from known distributions, seeded: under the null (same distribution) about alpha of
  // the tests reject; with a shift of one standard deviation and 30 values a side, nearly all do.
  it.each([
    ['exact', 10],
    ['normal', 40],
  ])('%s: the same distribution rejects at alpha 0.05 in about 5%% of 400 draws', (_method, n) => {
    const f = normal(rng(n));
    let rejected = 0;
    for (let k = 0; k < 400; k++) if (mannWhitneyGreater(draw(f, n), draw(f, n)).p < 0.05) rejected++;
    expect(rejected / 400).toBeGreaterThan(0.02);
    expect(rejected / 400).toBeLessThan(0.09);
  });
  it('a shift of one standard deviation with 30 a side is found in at least 95% of 200 draws', () => {
    const f = normal(rng(7));
    let found = 0;
    for (let k = 0; k < 200; k++) if (mannWhitneyGreater(draw(f, 30, 1), draw(f, 30)).p < 0.05) found++;
    expect(found / 200).toBeGreaterThan(0.95);
  });
  it('a shift the wrong way is never found', () => {
    const f = normal(rng(3));
    for (let k = 0; k < 50; k++) expect(mannWhitneyGreater(draw(f, 15, -1), draw(f, 15)).p).toBeGreaterThan(0.05);
  });
});
