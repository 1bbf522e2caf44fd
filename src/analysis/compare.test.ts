import { judgeComparison } from './compare.js';
import { DEFAULT_CRITERIA, type CompareCriteria } from './criteria.js';

const C = (o: Partial<CompareCriteria> = {}): CompareCriteria => ({ ...DEFAULT_CRITERIA, ...o });

describe('judgeComparison', () => {
  it.each([
    // [new, old, criteria, result]
    [[0.01], [0.01], C(), 'pass'],
    [[0.011], [0.01], C(), 'fail'], // no margin: any worse fails
    [[0.011], [0.01], C({ maxRatio: 1.2 }), 'pass'],
    [[0.013], [0.01], C({ maxRatio: 1.2 }), 'fail'],
    [[0.009], [0.01], C(), 'pass'], // better
    // A baseline of zero: the ratio allows nothing, the absolute margin does.
    [[0.001], [0], C({ maxRatio: 2 }), 'fail'],
    [[0.001], [0], C({ maxRatio: 2, maxDelta: 0.005 }), 'pass'],
    // Higher is better (throughput): the new side may fall by the margin, not more.
    [[95], [100], C({ better: 'higher', maxRatio: 1.1 }), 'pass'],
    [[85], [100], C({ better: 'higher', maxRatio: 1.1 }), 'fail'],
    [[120], [100], C({ better: 'higher' }), 'pass'],
    // Negative values: the margin is of the magnitude.
    [[-0.9], [-1], C({ maxRatio: 1.2 }), 'pass'],
    [[-0.7], [-1], C({ maxRatio: 1.2 }), 'fail'],
    // Means over pods.
    [[1, 3], [2, 2, 2], C(), 'pass'],
    [[1, 4], [2, 2, 2], C(), 'fail'],
    // Too few values: inconclusive, not pass.
    [[], [1], C(), 'inconclusive'],
    [[1], [], C(), 'inconclusive'],
    [[1, 1], [1, 1], C({ minSamples: 3 }), 'inconclusive'],
    // NaN and infinities are not measurements.
    [[NaN, NaN], [1], C(), 'inconclusive'],
    [[1, NaN, Infinity], [1], C(), 'pass'],
    // Values near Number.MAX_VALUE: sums overflow, means must not (Infinity <= Infinity would pass).
    [[1.7e308, 1.7e308], [1e308, 1e308], C({ maxRatio: 1.2 }), 'fail'],
    [[1.1e308, 1.1e308], [1e308, 1e308], C({ maxRatio: 1.2 }), 'pass'],
    [[1.7e308, 1.7e308], [1e308, 1e308], C({ better: 'higher' }), 'pass'],
    [[1e308, 1e308], [1.7e308, 1.7e308], C({ better: 'higher', maxRatio: 1.2 }), 'fail'],
    // The margin itself beyond MAX_VALUE (|old| x 1.5 here): the bound is -1.7e308 + 2.55e308 = 0.85e308.
    [[1e308], [-1.7e308], C({ maxRatio: 2.5 }), 'fail'],
    // Three values at the top: a mean of MAX_VALUE, not Infinity; worse than 1e308 by far.
    [[Number.MAX_VALUE, Number.MAX_VALUE, Number.MAX_VALUE], [1e308], C({ maxRatio: 1.2 }), 'fail'],
    [[5e-324, 5e-324], [0], C(), 'fail'],
    [[0.8e308], [-1.7e308], C({ maxRatio: 2.5 }), 'pass'],
  ])('new %j against old %j: %s', (n, o, c, want) => expect(judgeComparison(n, o, c).result).toBe(want));

  it('says both means, the counts and the bound', () => {
    expect(judgeComparison([0.013], [0.01], C({ maxRatio: 1.2 }))).toEqual({ result: 'fail', detail: 'worse: new 0.013 vs old 0.01 (n=1/1), allowed <= 0.012', value: 'new 0.013 old 0.01' });
  });

  describe('with the Mann-Whitney test', () => {
    const mw = C({ test: 'mann-whitney', minSamples: 3 });
    it('worse and significant: fail, with the p-value', () => {
      const v = judgeComparison([10, 11, 12, 13, 14], [1, 2, 3, 4, 5], mw);
      expect(v.result).toBe('fail');
      expect(v.detail).toContain('Mann-Whitney p=0.003968 < 0.05'); // 1 / C(10,5)
    });
    it('worse on average but not significant (one outlier): inconclusive, not fail', () => {
      const v = judgeComparison([1, 2, 3, 40], [1.5, 2.5, 3.5, 4.5], mw);
      expect(v.result).toBe('inconclusive');
      expect(v.detail).toMatch(/not significant.*p=0\.\d+ >= 0\.05/);
    });
    it('within the margin: pass without asking the test', () => expect(judgeComparison([1, 2, 3], [1, 2, 3], mw).result).toBe('pass'));
    it('higher is better: a significant drop fails', () => expect(judgeComparison([1, 2, 3, 4, 5], [10, 11, 12, 13, 14], C({ ...mw, better: 'higher' })).result).toBe('fail'));
  });
});
