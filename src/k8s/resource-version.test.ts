import { newerVersion } from './resource-version.js';

describe('newerVersion', () => {
  it.each([
    ['later etcd revision', '12', '11', true],
    ['same version', '12', '12', false],
    ['earlier', '9', '10', false],
    ['more digits, not string order', '100', '99', true],
    ['beyond 2^53, exactly', '9007199254740993', '9007199254740992', true],
    ['not decimal: unknown', 'abc', '1', false],
    ['leading zero: not an etcd revision', '012', '11', false],
    ['missing', undefined, '1', false],
  ])('%s', (_n, a, b, want) => expect(newerVersion(a, b)).toBe(want));
});
