import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { jsonEqual } from './json-equal.js';

describe('jsonEqual', () => {
  it.each([
    ['equal scalars', 1, 1, true],
    ['different numbers', 1, 2, false],
    ['number and string', 1, '1', false],
    ['null and object', null, {}, false],
    ['null and null', null, null, true],
    ['undefined and null', undefined, null, false],
    ['array and object with index keys', [1], { 0: 1 }, false],
    ['arrays of different length', [1], [1, 1], false],
    ['arrays in a different order', [1, 2], [2, 1], false],
    ['objects, keys in another order', { a: 1, b: { c: [1, { d: 'x' }] } }, { b: { c: [1, { d: 'x' }] }, a: 1 }, true],
    ['objects, one key more', { a: 1 }, { a: 1, b: 2 }, false],
    ['objects, same count, other key', { a: 1, b: undefined }, { a: 1, c: undefined }, false],
    ['nested difference', { a: { b: [1, 2, 3] } }, { a: { b: [1, 2, 4] } }, false],
    ['empty containers', { a: [], b: {} }, { a: [], b: {} }, true],
    ['empty array and empty object', [], {}, false],
    ['NaN', Number.NaN, Number.NaN, true],
  ])('%s', (_name, a, b, want) => {
    expect(jsonEqual(a, b)).toBe(want);
    expect(jsonEqual(b, a)).toBe(want);
  });

  it('agrees with isDeepStrictEqual on parsed JSON values', () => {
    // Pairs that share structure often, so that equal values and near misses are both common.
    const value = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(value, fc.option(value, { freq: 3 }), fc.boolean(), (a, maybe, reorder) => {
        let b: unknown = maybe ?? JSON.parse(JSON.stringify(a));
        if (reorder && b !== null && typeof b === 'object' && !Array.isArray(b)) b = Object.fromEntries(Object.entries(b).reverse());
        const [x, y] = [JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b))];
        expect(jsonEqual(x, y)).toBe(isDeepStrictEqual(x, y));
      }),
      { numRuns: 2000 },
    );
  });
});
