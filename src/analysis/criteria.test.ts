import { DEFAULT_CRITERIA, parseCriteria, type CompareCriteria } from './criteria.js';

const C = (o: Partial<CompareCriteria> = {}): CompareCriteria => ({ ...DEFAULT_CRITERIA, ...o });

describe('parseCriteria', () => {
  it.each([
    [undefined, DEFAULT_CRITERIA],
    ['', DEFAULT_CRITERIA],
    ['better=higher', C({ better: 'higher' })],
    ['max-ratio=1.2 max-delta=0.01', C({ maxRatio: 1.2, maxDelta: 0.01 })],
    ['max-ratio=1.2,  min-samples=3', C({ maxRatio: 1.2, minSamples: 3 })],
    ['test=mann-whitney alpha=0.01 min-samples=5', C({ test: 'mann-whitney', alpha: 0.01, minSamples: 5 })],
    ['test=mann-whitney min-samples=4', C({ test: 'mann-whitney', minSamples: 4 })],
  ])('%j reads as the criteria', (text, want) => expect(parseCriteria(text)).toEqual(want));

  it.each([
    ['better=worse', 'better=worse: lower or higher'],
    ['max-ratio=0.5', 'max-ratio=0.5: a decimal from 1 to 100'],
    ['max-ratio=1e3', 'max-ratio=1e3: a decimal from 1 to 100'],
    ['max-ratio=', 'max-ratio=: a decimal from 1 to 100'],
    ['max-delta=-1', 'max-delta=-1: a decimal of at least 0'],
    ['max-delta=Infinity', 'max-delta=Infinity: a decimal of at least 0'],
    ['min-samples=0', 'min-samples=0: an integer from 1 to 10000'],
    ['min-samples=10001', 'min-samples=10001: an integer from 1 to 10000'],
    ['test=t-test', 'test=t-test: none or mann-whitney'],
    ['alpha=0.05', 'alpha goes with test=mann-whitney'],
    ['test=mann-whitney alpha=0', 'alpha=0: a decimal above 0, at most 0.5'],
    // 3 a side: the smallest p is 1/20 = 0.05, never below alpha 0.05.
    ['test=mann-whitney min-samples=3', 'test=mann-whitney with alpha=0.05 needs min-samples=4 or more (with 3 a side no p-value can be below alpha)'],
    ['test=mann-whitney', 'test=mann-whitney with alpha=0.05 needs min-samples=4 or more (with 1 a side no p-value can be below alpha)'],
    ['test=mann-whitney alpha=0.01 min-samples=4', 'test=mann-whitney with alpha=0.01 needs min-samples=5 or more (with 4 a side no p-value can be below alpha)'],
    ['max-ratio=1.1 max-ratio=1.2', 'max-ratio is given twice'],
    ['tolerance=5%', 'unknown criterion "tolerance"'],
    ['x'.repeat(513), 'at most 512 characters'],
  ])('%j is refused: %s', (text, why) => expect(parseCriteria(text)).toBe(why));
});
