import { describe, expect, it } from '@jest/globals';
import { prefixEnd } from './writer.js';

describe('prefixEnd (the range end of "every key with this prefix")', () => {
  it.each([
    ['/scenario/run1', Buffer.from('/scenario/run2')],
    ['a/', Buffer.from('a0')],
    ['', Buffer.from([0])],
    ['é', Buffer.from([0xc3, 0xaa])],
  ])('%j', (prefix, want) => expect(prefixEnd(prefix)).toEqual(want));
});
