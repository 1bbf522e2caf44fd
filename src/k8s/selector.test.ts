import { selectorMatches } from './selector.js';

describe('selectorMatches', () => {
  const labels = { app: 'pg', zone: 'a' };
  it.each([
    ['no selector matches nothing', undefined, false],
    ['an empty selector matches everything', {}, true],
    ['matchLabels equal', { matchLabels: { app: 'pg' } }, true],
    ['matchLabels differ', { matchLabels: { app: 'redis' } }, false],
    ['matchLabels missing key', { matchLabels: { tier: 'db' } }, false],
    ['In', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }, true],
    ['In, value not listed', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] }, false],
    ['In, key absent', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] }, false],
    ['NotIn, value listed', { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, false],
    ['NotIn, key absent', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['a'] }] }, true],
    ['Exists', { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, true],
    ['DoesNotExist', { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, false],
    ['an unknown operator', { matchExpressions: [{ key: 'app', operator: 'Gt', values: ['1'] }] }, false],
    ['labels and expressions together', { matchLabels: { app: 'pg' }, matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, true],
  ])('%s', (_n, selector, want) => expect(selectorMatches(selector, labels)).toBe(want));
});
