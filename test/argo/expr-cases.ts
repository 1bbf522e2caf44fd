// Conditions and results for checking our reading of Argo's condition language against Argo itself:
// TABLE is the reviewed table of expr.test.ts (each row's expectation read from expr v1.17.7 and Argo
// v1.10.1, then run through the Go oracle of hack/argo-oracle), and generateCases makes any number of
// random conditions and results from a seed, the same ones for the same seed, for a golden test.

import type { ArgoValue, ResultKind } from '../../src/argo/expr.js';
import { seeded as rng } from '../support/seeded.js';

/** E marks a row whose condition is an error in Argo (compile or run: the measurement is Error). */
export const E = 'error' as const;
export type Row = [condition: string, result: ArgoValue, want: boolean | typeof E];

// Rows grouped by the provider's value; each one's expectation read from expr v1.17.7 and Argo v1.10.1,
// and checked against the Go oracle (hack/argo-oracle).
const scalar: Row[] = [
  ['result > 0.9', 0.97, true],
  ['result < 0.9', 0.97, false],
  ['result >= 1', 1, true],
  ['result == 1', 1, true],
  ['result != 1', 1.5, true],
  // The checker knows result is a float64: comparing it with a string or reading a field fails to compile.
  ['result == "x"', 1.5, E],
  ['result == nil', 1.5, false],
  ['result.foo > 1', 1.5, E],
  ['result[0] > 1', 1.5, E],
  ['isNaN(result)', NaN, true],
  ['result == result', NaN, false],
  ['result != result', NaN, true],
  ['result > 0 || result <= 0', NaN, false],
  ['isInf(result)', Infinity, true],
  ['result > 1e308', Infinity, true],
  ['result', 1, E],
  ['result + 1', 1, E],
  ['result * 2 == 3', 1.5, true],
  ['result / 0 > 0', 1, true],
  ['result % 2 == 1', 3, E],
  ['asInt(result) % 2 == 1', 3, true],
  ['asInt(result) == 1', 1.9, true],
  ['asInt(result) == -1', -1.9, true],
  ['asFloat(result) == result', 0.5, true],
  ['isNil(result)', 0, false],
  ['default(result, 5) == 0', 0, true],
  ['result ** 2 == 4', 2, true],
  ['-result == -2', 2, true],
  ['len(result) > 0', 1, E],
  ['result in [1, 2]', 2, true],
  ['result in ["a"]', 2, E],
  ['(result ?? 0) > 1', 2, true],
  ['abs(result) == 2', -2, true],
  ['ceil(result) == 2', 1.2, true],
  ['floor(result) == 1', 1.8, true],
  ['round(result) == 3', 2.5, true],
  ['round(result) == -3', -2.5, true],
  ['int(result) == 2', 2.9, true],
  ['string(result) == "1e+06"', 1e6, true],
  ['string(result) == "0.5"', 0.5, true],
  ['string(result) == "NaN"', NaN, true],
  ['max(result, 1) == 1', 0.5, true],
  ['min(result, 1) == 0.5', 0.5, true],
  // max(1, result) is an int to the checker: a float64 maximum fails the assertion of `==` on ints.
  ['max(1, result) == 1', 2, E],
  ['max(1, result) == 1', 0.5, true],
  ['result > 0.5 ? true : false', 0.7, true],
  ['result > 0.5 ? "yes" : "no"', 0.7, E],
  ['result > 0.5 // a comment', 0.7, true],
  ['/* a comment */ result > 0.5', 0.7, true],
  ['result > 0.5 and not (result > 0.9)', 0.7, true],
  ['all(result, # > 0)', 1.5, E],
];

const vector: Row[] = [
  ['result[0] > 0.9', [0.97], true],
  ['result[-1] == 3', [1, 2, 3], true],
  ['result[3] == 3', [1, 2, 3], E],
  ['result[-4] == 1', [1, 2, 3], E],
  ['len(result) == 0', [], true],
  ['result[0] > 1', [], E],
  ['all(result, # < 0.5)', [0.1, 0.2], true],
  ['all(result, # < 0.5)', [], true],
  ['any(result, # > 0.5)', [0.1, 0.9], true],
  ['none(result, # > 0.5)', [0.1], true],
  ['one(result, # > 0.5)', [0.9, 0.8], false],
  ['count(result, # > 0.5) == 2', [0.9, 0.8, 0.1], true],
  ['len(filter(result, # > 0.5)) == 2', [0.9, 0.8, 0.1], true],
  ['map(result, # * 2)[1] == 1.6', [0.9, 0.8], true],
  ['sum(result) == 6', [1, 2, 3], true],
  ['sum(result) == 0', [], true],
  ['mean(result) == 2', [1, 2, 3], true],
  ['median(result) == 2.5', [1, 2, 3, 4], true],
  ['max(result) == 3', [1, 3, 2], true],
  ['min(result) == 1', [1, 3, 2], true],
  ['max(result) == nil', [], true],
  ['mean(result) == 0', [], true],
  ['result == [1, 2]', [1, 2], true],
  ['result[0] == "x"', [1], E],
  ['result.x > 1', [1], E],
  ['result[0:2] == [1, 2]', [1, 2, 3], true],
  ['result[1:] == [2, 3]', [1, 2, 3], true],
  ['result[:-1] == [1, 2]', [1, 2, 3], true],
  ['result[5:] == []', [1, 2, 3], true],
  ['len(result[2:1]) == 0', [1, 2, 3], true],
  ['2 in result', [1, 2], true],
  ['"a" in result', [1], E],
  ['isNaN(result[0])', [NaN], true],
  ['result[0] == result[0]', [NaN], false],
  ['result == result', [NaN], false],
  ['any(result, isNaN(#))', [1, NaN], true],
  ['all(result, .x > 1)', [1], E],
  ['filter(result, # > 1)[0] == 2', [1, 2, 3], true],
  ['filter(result, # > 5)[0] == 2', [1, 2], E],
  ['map(result, #index)[2] == 2', [5, 6, 7], true],
  ['all(result, #index >= 0)', [1], E],
  ['count(result) == 0', [], true],
  // count() without a predicate counts true elements: a float64 is not a bool.
  ['count(result) == 1', [1], E],
  ['sum(result, # * 2) == 6', [1, 2], true],
  ['isNil(result)', [], false],
  ['default(result, [9])[0] == 1', [1], true],
  ['result?.[0] == 1', [1], true],
  ['string(result) == "[0.5 1]"', [0.5, 1], true],
  ['isNaN(len(result))', [], E],
  ['isNaN(len(result) + 1)', [], false],
  // filter(a, p)[-1] searches from the end and leaves its loop's `true` on the VM's stack each round: a
  // left operand pushed before it is not what the comparison takes (a bool against a number).
  ['filter(result, # > 0)[-1] > 0.5', [1, 2], true],
  ['0.5 < filter(result, # > 0)[-1]', [1, 2], E],
  ['filter(result, # > 5)[-1] > 0.5', [1, 2], E],
];

const web: Row[] = [
  ['result.status == "ok"', { status: 'ok' }, true],
  ['result.missing == nil', {}, true],
  ['result.missing.deeper == nil', {}, E],
  ['result.missing?.deeper == nil', {}, true],
  ['result?.a?.b == nil', { a: {} }, true],
  // An index after a `?.` chain is outside the chain: a nil before it still fails.
  ['result.a?.b[0] == nil', { a: null }, E],
  ['result.a?.b.c == nil', { a: null }, true],
  ['result.a?.[0] == nil', { a: null }, true],
  ['result["a-b"] == 1', { 'a-b': 1 }, true],
  ['result.n == 1', { n: 1 }, true],
  ['result.n + 1 == 2', { n: 1 }, true],
  ['result.n % 2 == 1', { n: 3 }, E],
  ['result.s == 1', { s: '1' }, false],
  ['result.s > 1', { s: '1' }, E],
  ['result.s + "x" == "1x"', { s: '1' }, true],
  ['result.s contains "ell"', { s: 'hello' }, true],
  ['result.s startsWith "he" && result.s endsWith "lo"', { s: 'hello' }, true],
  ['result.s not contains "z"', { s: 'hello' }, true],
  ['result.missing contains "a"', {}, false],
  ['result.n contains "a"', { n: 1 }, E],
  ['len(result.s) == 2', { s: 'é!' }, true],
  ['result.s[0:1] == "h"', { s: 'hi' }, true],
  ['result.s[0] == 104', { s: 'hi' }, true],
  ['result.list[1] == 2', { list: [1, 2] }, true],
  ['len(result.list) == 2', { list: [1, 2] }, true],
  ['all(result.list, # > 0)', { list: [1, 2] }, true],
  ['all(result.items, .ok)', { items: [{ ok: true }, { ok: true }] }, true],
  ['any(result.items, .v > 1)', { items: [{ v: 1 }, { v: 2 }] }, true],
  ['all(result.items, all(.tags, # != "x"))', { items: [{ tags: ['a'] }, { tags: [] }] }, true],
  ['result.flag', { flag: true }, true],
  ['!result.flag', { flag: false }, true],
  ['not result.flag', { flag: false }, true],
  ['result.flag and result.n > 0', { flag: true, n: 1 }, true],
  // expr folds `x && true` to x and `x && false` to false, x unevaluated.
  ['result.n && true', { n: 1 }, E],
  ['result.n && false', { n: 1 }, false],
  ['result.missing.x && false', {}, false],
  ['false && result.missing.x', {}, false],
  ['true || result.missing.x', {}, true],
  ['result.flag || result.missing.x', { flag: true }, true],
  ['result.flag && result.n', { flag: true, n: 2 }, E],
  ['(result.missing ?? 5) == 5', {}, true],
  ['(result.n ?? 5) == 1', { n: 1 }, true],
  ['result.x ?? result.y', { y: true }, true],
  ['result.n > 1 || result.n.bad', { n: 5 }, true],
  // `in` a list of string literals is a lookup in a Go map of strings: a number panics, nil is "".
  ['result.x in ["a", "b"]', { x: 'a' }, true],
  ['result.x in ["a", "b"]', { x: 1 }, E],
  ['result.x in ["a", "b"]', {}, false],
  ['result.x in ["", "b"]', {}, true],
  ['result.x in [1, 2]', { x: 1 }, true],
  ['result.x not in [1, 2]', { x: 3 }, true],
  ['not (result.x in [1, 2])', { x: 3 }, true],
  ['"a" in result', { a: 1 }, true],
  ['"b" in result', { a: 1 }, false],
  ['1 in result', { a: 1 }, E],
  ['"a" in result.m', { m: { a: 1 } }, true],
  ['1 in result.m', { m: { a: 1 } }, E],
  ['result.x in result.list', { x: 2, list: [1, 2] }, true],
  // A map compares by reflect.DeepEqual: the JSON's float64 1 is not the literal's int 1.
  ['result == {"a": 1}', { a: 1 }, false],
  ['result == {"a": 1.0}', { a: 1 }, true],
  ['result.list == [1, 2]', { list: [1, 2] }, true],
  ['result.list[-1] == 3', { list: [1, 2, 3] }, true],
  ['result.list[5] == nil', { list: [1, 2, 3] }, E],
  ['result["list"][0] == 1', { list: [1, 2] }, true],
  ['result.list[0.5] == 1', { list: [1, 2] }, true],
  ['result[0] == 1', { a: 1 }, E],
  ['result.a.b == 1', { a: 5 }, E],
  ['max(result.list) == 3', { list: [1, 3, 2] }, true],
  ['max(result.list) == 3', { list: [1, '3', 2] }, E],
  ['mean(result.list) > 1', { list: [] }, false],
  ['sum(result.list) == 0', { list: [] }, true],
  ['sum(result.list) == "ab"', { list: ['a', 'b'] }, E],
  // sum of an array literal is rewritten to `+`, which adds strings.
  ['sum([result.a, result.b]) == "ab"', { a: 'a', b: 'b' }, true],
  // `#` is only fetched when used: a map has a length but no elements.
  ['all(result.m, true)', { m: { a: 1 } }, true],
  ['all(result.m, # > 0)', { m: { a: 1 } }, E],
  ['all(result.m, # > 0)', { m: {} }, true],
  ['all(result.missing, # > 0)', {}, E],
  // filter(...)[0] stops at the first match; len(filter(...)) counts them all.
  ['filter(result.list, # > 1)[0] == 2', { list: [1, 2, 'x'] }, true],
  ['len(filter(result.list, # > 1)) == 1', { list: [1, 2, 'x'] }, E],
  ['all(result.list, # > 0) && all(result.list, # < 10)', { list: [1, 2] }, true],
  // Two all() over the same array are merged element by element: q fails before p's false is seen.
  ['all(result.list, # < 2) && all(result.list, #.x == 1)', { list: [1, 5] }, E],
  ['any(result.list, # > 1) || any(result.list, # == "a")', { list: [1, 2] }, true],
  ['(result.s == "x" ? 1 : 0) == 1', { s: 'x' }, true],
  // A ternary of an int and nil is an int to the checker, and `==` of two ints asserts them.
  ['(result.c ? 1 : nil) == 1', { c: false }, E],
  ['(result.c ? 1 : nil) == nil', { c: false }, true],
  ['result.c ? true : false', { c: 1 }, E],
  ['result.n > 1 && result.n < 10', { n: 5 }, true],
  ['1 < result.n < 10', { n: 5 }, true],
  ['1 < result.n < 3', { n: 5 }, false],
  ['result.n ?? 0 > 1', { n: 5 }, E],
  ['asInt(result.s) > 0', { s: 'abc' }, E],
  ['asInt(result.s) == 12', { s: '12' }, true],
  ['isNaN(result.x)', { x: 'a' }, E],
  ['isNil(result.anything)', { a: 1 }, false],
  ['default(result.x, 1) == 1', { x: 2 }, false],
  ['result[0] == "x"', ['x'], true],
];

const nil: Row[] = [
  ['isNil(result)', null, true],
  // A nil result is typed nil: reading a field of it does not compile, even in isNil's argument.
  ['isNil(result.x)', null, E],
  ['default(result.x, 1) == 1', null, E],
  ['default(result, 1) == 1', null, true],
  ['result == nil', null, true],
  ['result > 1', null, E],
  ['result ?? true', null, true],
  ['result?.x == nil', null, E],
];

const literals: Row[] = [
  ['default(result, 1) == 1', 2, false],
  ['nil == nil', null, true],
  ['nil == 0', 1, false],
  ['nil > 0', 1, E],
  ['1 == 1.0', 1, true],
  ['1 / 2 == 0.5', 1, true],
  ['7 % 3 == 1', 1, true],
  ['-7 % 3 == -1', 1, true],
  ['7 % 0 == 0', 1, E],
  ['7.5 % 2 == 1', 1, E],
  ['2 ** 10 == 1024', 1, true],
  ['2 ** 0.5 > 1.41', 1, true],
  ['9223372036854775807 + 1 < 0', 1, true],
  ['9223372036854775808 > 0', 1, E],
  ['0x10 == 16 && 0o17 == 15 && 0b101 == 5 && 1_000 == 1000', 1, true],
  ['1e3 == 1000', 1, true],
  ['.5 == 0.5', 1, true],
  ['"a" + "b" == "ab"', 1, true],
  ['"a" + 1 == "a1"', 1, E],
  ['"abc" < "abd"', 1, true],
  ['"a\\tb" == \'a\\u0009b\'', 1, true],
  ['"\\x41" == "A"', 1, true],
  ['"\\q" == "q"', 1, E],
  ['`a\\nb` == "a\\\\nb"', 1, true],
  ['[1, 2] == [1, 2]', 1, true],
  ['[1, 2] == [1.0, 2.0]', 1, true],
  ['{} == {}', 1, true],
  ['{"a": [1]} == {"a": [1]}', 1, true],
  ['{a: 1, a: 2}.a == 1', 1, true],
  ['[1, "a", nil][2] == nil', 1, true],
  ['[1, [2, 3]][1][0] == 2', 1, true],
  ['len([1, 2, 3]) == 3', 1, true],
  ['len({a: 1}) == 1', 1, true],
  ['len("héllo") == 5', 1, true],
  ['"héllo"[1:3] == "é"', 1, true],
  ['(true ? 1 : "a") == 1', 1, true],
  ['nil ? true : false', 1, E],
  ['true ?: false', 1, true],
  ['all([1, 2, 3], {# > 0})', 1, true],
  ['map([1, 2], # * 2) == [2, 4]', 1, true],
  ['filter([{v: 1}, {v: 2}], .v > 1)[0].v == 2', 1, true],
  ['count([true, false, true]) == 2', 1, true],
  ['one([1, 2, 3], # == 2)', 1, true],
  ['none([], # > 0)', 1, true],
  ['sum([1, 2.5]) == 3.5', 1, true],
  ['mean(1, 2) == 1.5', 1, true],
  // mean(1, 2) is an int to the checker (its first argument's type), and `== 1` asserts ints.
  ['mean(1, 2) == 1', 1, E],
  ['median(1, 2, 3) == 2', 1, E],
  ['max(1, 2.5) == 2.5', 1, true],
  ['abs(-5) == 5', 1, true],
  ['string(1.5) == "1.5"', 1, true],
  ['string(nil) == "<nil>"', 1, true],
  ['string([1, "a"]) == "[1 a]"', 1, true],
  ['string({a: 1, b: true}) == "map[a:1 b:true]"', 1, true],
  ['asInt("12") == 12', 1, true],
  ['asInt("1.5") == 1', 1, E],
  ['asFloat("1.5") == 1.5', 1, true],
  ['asFloat("abc") > 0', 1, E],
  ['int("12") == 12', 1, true],
  ['int("1.5") == 1', 1, E],
  ['float("1e3") == 1000', 1, true],
  ['isNaN(1)', 1, false],
  ['isNaN("x")', 1, E],
  ['isNaN(nil)', 1, E],
  ['!true == false', 1, true],
  ['-2 ** 2 == -4', 1, true],
  ['2 ** 3 ** 2 == 512', 1, true],
  ['10 - 2 - 3 == 5', 1, true],
  // Strings are bytes: a slice can cut a character, and the halves join again.
  ['"héllo"[0:2] <= "héllo"', 1, true],
  ['"héllo"[0:2] + "héllo"[2:] == "héllo"', 1, true],
  ['len("héllo"[0:2]) == 2', 1, true],
  ['"é" startsWith "é"[0:1]', 1, true],
  // expr's optimizer prints both collections of all(..) && all(..) to compare them, and printing a folded
  // array holding +Inf panics: Argo's compile panics (its controller would not survive it).
  ['all([1 / 0], # > 0) && all([1 / 0], # > 1)', 1, E],
];

// Errors in Argo and here alike: an unknown name, a call of nil, syntax.
const broken: Row[] = [
  ['foo > 1', 1, E],
  ['result.x(1)', { x: 1 }, E],
  ['result >', 1, E],
  ['(result > 1', 1, E],
  ['result > 1)', 1, E],
  ['result @ 1', 1, E],
  ['# > 1', 1, E],
];

// What Argo judges and we refuse (see expr.ts): the verdict is Argo's, ours is an error.
const refused: Row[] = [
  ['upper("a") == "A"', 1, true],
  ['"a" matches "a"', 1, true],
  ['1..3 == [1, 2, 3]', 1, true],
  ['let x = 1; x == 1', 1, true],
  ['len == nil', 1, true],
];

/** Case is one condition, the result it is judged against and its Go type, and what Argo says if known. */
export interface Case {
  condition: string;
  result: ArgoValue;
  kind: ResultKind;
  want?: boolean | typeof E;
  /** refused: Argo judges it (`want`), we refuse the construct, so ours is an error. */
  refused?: true;
}

const as = (rows: Row[], kind: ResultKind): Case[] => rows.map(([condition, result, want]) => ({ condition, result, kind: result === null ? 'nil' : kind, want }));

/** TABLE is every row of the table, with the kind of result it is judged against. */
export const TABLE: Case[] = [
  ...as(scalar, 'float'),
  ...as(vector, 'floats'),
  ...as(web, 'json'),
  ...as(nil, 'nil'),
  ...as(literals, 'float'),
  ...as(broken, 'json'),
  ...as(refused, 'json').map((c): Case => ({ ...c, refused: true })),
];

// Results as providers hand them over: scalars and vectors from Prometheus, bodies from the web provider.
const RESULTS: Record<'float' | 'floats' | 'map' | 'json' | 'nil', ArgoValue[]> = {
  float: [0.97, 0, -1.5, 3, 1e6, NaN, Infinity, -0.5],
  floats: [[], [0.5], [1, 2, 3], [NaN, 1], [0.1, 0.9, 0.5, -2], [Infinity]],
  map: [
    { status: 'ok', n: 3, ratio: 0.25, list: [1, 2, 3], items: [{ ok: true, v: 1, tags: ['a'] }, { ok: false, v: 5, tags: [] }], s: 'héllo', flag: true, empty: {}, nested: { a: { b: 2 } }, none: null },
    { status: 'degraded', n: 0, ratio: 0.75, list: [], items: [], s: '', flag: false, empty: {}, nested: { a: null }, none: null },
    { status: 'ok', n: '3', list: [1, 'x', null], items: [{ ok: 1 }], s: 7, flag: 'yes' },
    { n: 2.5, list: [0.5, 1.5], items: [{ ok: true, v: 2 }], s: 'ok', flag: true, nested: {} },
    {},
  ],
  json: [[1, 'a', null, true], [2, 4], [], 'text', true, 12],
  nil: [null],
};
const KIND: Record<keyof typeof RESULTS, ResultKind> = { float: 'float', floats: 'floats', map: 'json', json: 'json', nil: 'nil' };

// What a condition written for each kind of result reads of it.
const LEAVES: Record<keyof typeof RESULTS, { num: string[]; str: string[]; arr: string[]; any: string[]; bool: string[] }> = {
  float: { num: ['result', 'result', 'asInt(result)'], str: ['string(result)'], arr: ['[result, 1]'], any: ['result', 'default(result, 0)'], bool: ['result > 0.5', 'isNaN(result)', 'isInf(result)'] },
  floats: { num: ['result[0]', 'result[-1]', 'len(result)', 'sum(result)'], str: ['string(result)'], arr: ['result', 'result', 'result[1:]'], any: ['result?.[0]', 'max(result)'], bool: ['result[0] > 0.5', 'isNil(result)'] },
  map: {
    num: ['result.n', 'result.ratio', 'result.list[0]', 'result["n"]', 'len(result.list)'],
    str: ['result.status', 'result.s', 'result["status"]'],
    arr: ['result.list', 'result.items', 'result.nested?.a', 'result.empty'],
    any: ['result.missing', 'result.none', 'result.nested?.a?.b', 'result.nested.a.b', 'result?.n', 'result.items[0]?.v'],
    bool: ['result.flag', 'result.status == "ok"', '"n" in result', 'result.items[0].ok'],
  },
  json: { num: ['result[0]', 'len(result)'], str: ['result[1]', 'result'], arr: ['result'], any: ['result[2]', 'result'], bool: ['result', 'result[3]'] },
  nil: { num: ['default(result, 1)'], str: ['default(result, "x")'], arr: ['default(result, [])'], any: ['result', 'result ?? 1'], bool: ['isNil(result)', 'result == nil'] },
};

/** generateCases makes n random conditions, each paired with `perCondition` results, all from the seed. */
export function generateCases(seed: number, n: number, perCondition = 3): Case[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const chance = (p: number): boolean => r() < p;
  const kinds = Object.keys(RESULTS) as (keyof typeof RESULTS)[];
  let home: keyof typeof RESULTS = 'float';
  let inPredicate = 0;
  // Mostly what the condition's own kind of result holds; now and then another kind's, a mistake.
  const leaf = (what: 'num' | 'str' | 'arr' | 'any' | 'bool'): string => pick(LEAVES[chance(0.1) ? pick(kinds) : home][what]);

  const num = (d: number): string => {
    if (d <= 0 || chance(0.3)) {
      if (inPredicate && chance(0.4)) return pick(['#', '#.v', '.v', '#[0]']);
      return chance(0.5) ? leaf('num') : pick(['0', '1', '2', '-1', '3', '0.5', '1e3', '.25', '0x10', '1_000', '9223372036854775807', '0.1', '-0.0', '1 / 0', '7 % -3', '2 ** -1', '0b11', '0o17', '1.5e-7']);
    }
    const a = num(d - 1);
    const b = num(d - 1);
    return pick([
      `${a} + ${b}`, `${a} - ${b}`, `${a} * ${b}`, `${a} / ${b}`, `${a} % ${b}`, `${a} ** ${b}`, `-${a}`, `(${a})`, `${a} + ${b} * ${a}`,
      `abs(${a})`, `ceil(${a})`, `floor(${a})`, `round(${a})`, `int(${a})`, `float(${a})`, `asInt(${a})`, `asFloat(${a})`,
      `len(${arr(d - 1)})`, `sum(${arr(d - 1)})`, `mean(${arr(d - 1)})`, `median(${arr(d - 1)})`, `max(${arr(d - 1)})`, `min(${a}, ${b})`,
      `count(${arr(d - 1)}, ${pred(d - 1)})`, `default(result, ${a})`, `(${bool(d - 1)} ? ${a} : ${b})`, `(${any(d - 1)} ?? ${a})`,
      `${arr(d - 1)}[${pick(['0', '1', '-1', '5'])}]`, `sum([${a}, ${b}])`, `filter(${arr(d - 1)}, ${pred(d - 1)})[0]`,
      `int(${str(d - 1)})`, `float(${str(d - 1)})`, `asInt(${str(d - 1)})`, `asFloat(${str(d - 1)})`, `len(${str(d - 1)})`, `${str(d - 1)}[0]`,
      `max(${a}, ${b}, ${num(d - 1)})`, `mean(${a}, ${b})`, `median(${a}, ${b}, ${arr(d - 1)})`, `sum(${arr(d - 1)}, ${a})`, `count(${arr(d - 1)})`,
      `{a: ${a}}.a`, `[${a}][0]`, `${arr(d - 1)}[${a}]`, `filter(${arr(d - 1)}, ${pred(d - 1)})[-1]`, `${a} ?? ${b}`,
    ]);
  };
  const str = (d: number): string => {
    if (d <= 0 || chance(0.4)) return chance(0.5) ? leaf('str') : pick(['"ok"', "'x'", '""', '"héllo"', '`raw`', '"a\\tb"', '"3"', '"\\u00e9"', '"\\x41"', '"1e3"', '" 1"', '"0x10"', '"NaN"', '"-7"']);
    return pick([
      `${str(d - 1)} + ${str(d - 1)}`, `string(${num(d - 1)})`, `${str(d - 1)}[0:2]`, `${str(d - 1)}[1:]`, `string(${arr(d - 1)})`, `string(${any(d - 1)})`,
      `{"k": ${str(d - 1)}}.k`, `(${any(d - 1)} ?? ${str(d - 1)})`, `${str(d - 1)}[-1:]`, `(${bool(d - 1)} ? ${str(d - 1)} : ${str(d - 1)})`,
    ]);
  };
  const arr = (d: number): string => {
    if (d <= 0 || chance(0.4)) return chance(0.6) ? leaf('arr') : pick(['[1, 2, 3]', '[]', '[0.5, "a", nil]', '[{v: 1, ok: true}, {v: 2, ok: false}]', '["ok", "x"]']);
    return pick([
      `filter(${arr(d - 1)}, ${pred(d - 1)})`, `map(${arr(d - 1)}, # * 2)`, `map(${arr(d - 1)}, #index)`, `${arr(d - 1)}[1:]`, `${arr(d - 1)}[:-1]`,
      `[${num(d - 1)}, ${num(d - 1)}]`, `{a: [1, 2]}.a`, `(${any(d - 1)} ?? [])`, `(${bool(d - 1)} ? [1] : [2.0])`, `filter(map(${arr(d - 1)}, # * 2), # > 1)`,
      `filter(filter(${arr(d - 1)}, ${pred(d - 1)}), ${pred(d - 1)})`, `map(filter(${arr(d - 1)}, ${pred(d - 1)}), # + 1)`, `${arr(d - 1)}[${num(d - 1)}:${num(d - 1)}]`,
      `map(${arr(d - 1)}, ${pred(d - 1)})`,
    ]);
  };
  const any = (d: number): string =>
    d <= 0 || chance(0.5)
      ? chance(0.7) ? leaf('any') : pick(['nil', '{a: nil}.a', '[nil][0]', '{a: 1}', '{a: 1.0}', '{}', 'result', '{status: "ok"}'])
      : pick([num(d), str(d), arr(d), bool(d)]);
  const pred = (d: number): string => {
    inPredicate++;
    const body = pick([`# > ${num(d)}`, `${bool(d)}`, `.ok`, `# == ${any(d)}`, `isNaN(#)`, `# in [1, 2]`, `#.v > 1`]);
    inPredicate--;
    return chance(0.3) ? `{${body}}` : body;
  };
  const bool = (d: number): string => {
    if (d <= 0 || chance(0.15)) return chance(0.6) ? leaf('bool') : pick(['true', 'false', 'isNil(result)']);
    const cmp = pick(['==', '!=', '<', '<=', '>', '>=']);
    return pick([
      `${num(d - 1)} ${cmp} ${num(d - 1)}`, `${num(d - 1)} ${cmp} ${num(d - 1)}`, `${num(d - 1)} ${cmp} ${num(d - 1)}`, `${str(d - 1)} ${cmp} ${str(d - 1)}`,
      `${any(d - 1)} == ${any(d - 1)}`, `${bool(d - 1)} && ${bool(d - 1)}`, `${bool(d - 1)} || ${bool(d - 1)}`, `${bool(d - 1)} and ${bool(d - 1)}`,
      `not ${bool(d - 1)}`, `!(${bool(d - 1)})`, `${pick(['all', 'any', 'none', 'one'])}(${arr(d - 1)}, ${pred(d - 1)})`, `${num(d - 1)} in ${arr(d - 1)}`,
      `${str(d - 1)} in result`, `${any(d - 1)} in ["ok", "x"]`, `${any(d - 1)} not in [1, 2]`,
      `${str(d - 1)} ${pick(['contains', 'startsWith', 'endsWith', 'not contains'])} ${str(d - 1)}`, `isNaN(${num(d - 1)})`, `isInf(${num(d - 1)})`,
      `isNil(${any(d - 1)})`, `(${bool(d - 1)} ? ${bool(d - 1)} : ${bool(d - 1)})`, `${num(d - 1)} < ${num(d - 1)} < ${num(d - 1)}`,
      `(${any(d - 1)} ?? ${bool(d - 1)})`, `${arr(d - 1)} == ${arr(d - 1)}`, `len(${arr(d - 1)}) ${cmp} ${num(d - 1)}`, `${bool(d - 1)} && false`,
      `all(${arr(d - 1)}, ${pred(d - 1)}) && all(${arr(d - 1)}, ${pred(d - 1)})`,
      `${pick(['all', 'none'])}(${leaf('arr')}, ${pred(d - 1)}) && ${pick(['all', 'none'])}(${leaf('arr')}, ${pred(d - 1)})`,
      `any(${leaf('arr')}, ${pred(d - 1)}) || any(${leaf('arr')}, ${pred(d - 1)})`, `${any(d - 1)} in ${any(d - 1)}`, `${str(d - 1)} in {a: 1, "": 2}`,
      `len(filter(${arr(d - 1)}, ${pred(d - 1)})) > 0`, `filter(${arr(d - 1)}, ${pred(d - 1)})[-1] == ${any(d - 1)}`, `${num(d - 1)} ${cmp} ${str(d - 1)}`,
      `${bool(d - 1)} == ${bool(d - 1)}`, `${bool(d - 1)} != ${num(d - 1)}`, `(${any(d - 1)} ?? false)`, `${any(d - 1)} != nil`, `${bool(d - 1)} || true`,
      `${bool(d - 1)} ?: ${bool(d - 1)}`,
    ]);
  };

  const cases: Case[] = [];
  for (let i = 0; i < n; i++) {
    home = pick(kinds);
    // Mostly conditions, now and then a value that is not a bool, as a mistaken condition would be.
    const condition = chance(0.05) ? num(2) : bool(1 + Math.floor(r() * 3));
    for (let k = 0; k < perCondition; k++) {
      // Most of the results are of the kind the condition was written for; one in five of any kind.
      const kind = k > 0 && chance(0.2) ? pick(kinds) : home;
      cases.push({ condition, result: pick(RESULTS[kind]), kind: KIND[kind] });
    }
  }
  return cases;
}
