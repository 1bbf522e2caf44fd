// Every row of ROWS was checked against client-go's jsonpath itself (v0.35.4, whose jsonpath is the
// code of the v0.34.5 that Argo Rollouts v1.10.1 pins), driven as webmetric.go drives it: Parse, then
// json.Unmarshal of the body, FindResults, and getValue's first value through json.Marshal.

import { goFloatV } from './jsonpath-go.js';
import { compileJsonPath, DEFAULT_WEB_JSONPATH, findFirst, NO_VALUE, webValue } from './jsonpath.js';

// A metrics answer. Maps a row walks with `*` or `..` have one key where it matters: Go walks a map in
// random order, so Argo's "first" among several keys is not defined.
const DOC = JSON.stringify({
  data: { value: 0.97, count: 12, ok: true, label: '<p95 & up>', none: null, 'key.with.dots': 7, key: { with: { dots: 8 } }, tiny: 1e-7, huge: 1e21, micro: 0.000001, ratio: 1 / 3 },
  items: [
    { name: 'a', status: 'ok', latency: 120, tags: ['x'] },
    { name: 'b', status: 'fail', latency: 340.5, tags: [] },
    { name: 'c', status: 'ok', latency: 95, tags: ['y', 'z'] },
  ],
  series: [1, 2, 3, 4, 5],
  empty: [],
  text: 'héllo',
});

/** What the measurement becomes: the recorded text of a value, an Error's message, the raw body, or a Go panic. */
type Expected = { text: string } | { error: string } | 'raw' | 'panic';
const RAW = 'raw';
const PANIC = 'panic';

// [what, jsonPath, body, expected]
const ROWS: [string, string, string, Expected][] = [
  ['empty jsonPath is Argo\'s default {$}', '', '{"a":1}', { text: '{"a":1}' }],
  ['{$} is the whole document', '{$}', '[1,2]', { text: '[1,2]' }],
  ['{} is the document too', '{}', '{"a":1}', { text: '{"a":1}' }],
  ['{@} is the document too', '{@}', '5', { text: '5' }],
  ['a field', '{.data.value}', DOC, { text: '0.97' }],
  ['an integer stays a float64', '{.data.count}', DOC, { text: '12' }],
  ['a bool', '{.data.ok}', DOC, { text: 'true' }],
  ['json.Marshal escapes < > &', '{.data.label}', DOC, { text: '"\\u003cp95 \\u0026 up\\u003e"' }],
  ['a null value is found, and is null', '{.data.none}', DOC, { text: 'null' }],
  ['below 1e-6 Go writes an exponent', '{.data.tiny}', DOC, { text: '1e-7' }],
  ['from 1e21 Go writes an exponent', '{.data.huge}', DOC, { text: '1e+21' }],
  ['0.000001 stays a decimal', '{.data.micro}', DOC, { text: '0.000001' }],
  ['shortest digits of 1/3', '{.data.ratio}', DOC, { text: '0.3333333333333333' }],
  ['-0 keeps its sign', '{.a}', '{"a":-0}', { text: '-0' }],
  ['a map is marshalled with sorted keys', '{.data.key}', DOC, { text: '{"with":{"dots":8}}' }],
  ['an array', '{.series}', DOC, { text: '[1,2,3,4,5]' }],
  ['index 0', '{.series[0]}', DOC, { text: '1' }],
  ['index -1 is the last', '{.series[-1]}', DOC, { text: '5' }],
  ['[] is [0]', '{.series[]}', DOC, { text: '1' }],
  ['a slice: its first value', '{.series[1:3]}', DOC, { text: '2' }],
  ['a slice to the end', '{.series[3:]}', DOC, { text: '4' }],
  ['a negative slice start', '{.series[-2:]}', DOC, { text: '4' }],
  ['a slice with a step', '{.series[1::2]}', DOC, { text: '2' }],
  ['[*]: the first member', '{.series[*]}', DOC, { text: '1' }],
  ['a union', '{.series[4,0]}', DOC, { text: '5' }],
  ['an index past the end is an error', '{.series[5]}', DOC, { error: 'Could not find JSONPath in body: array index out of bounds: index 5, length 5' }],
  ['a slice past the end is an error, not a clamp', '{.series[1:9]}', DOC, { error: 'Could not find JSONPath in body: array index out of bounds: index 8, length 5' }],
  ['start after end', '{.series[3:1]}', DOC, { error: 'Could not find JSONPath in body: starting index 3 is greater than ending index 1' }],
  ['step 0', '{.series[0:2:0]}', DOC, { error: 'Could not find JSONPath in body: step must be > 0' }],
  ['[-1] of an empty array is an error', '{.empty[-1]}', DOC, { error: 'Could not find JSONPath in body: array index out of bounds: index -1, length 0' }],
  ['[0:0] asks for nothing', '{.series[0:0]}', DOC, { error: 'result of web metric produced no value' }],
  ['an index of a map is an error', '{.data[0]}', DOC, { error: 'Could not find JSONPath in body: map[string]interface {} is not array or slice' }],
  ['an index of null finds nothing', '{.data.none[0]}', DOC, { error: 'result of web metric produced no value' }],
  ['[*] of an empty array finds nothing', '{.empty[*]}', DOC, { error: 'result of web metric produced no value' }],
  ['field through an array', '{.items[*].name}', DOC, { text: '"a"' }],
  ['field through an array: only members that have it', '{.items[*].status}', DOC, { text: '"ok"' }],
  ['a missing key is an error', '{.data.nope}', DOC, { error: 'Could not find JSONPath in body: nope is not found' }],
  ['a missing key under null is an error', '{.data.none.x}', DOC, { error: 'Could not find JSONPath in body: x is not found' }],
  ['a field of an array is an error', '{.items.name}', DOC, { error: 'Could not find JSONPath in body: name is not found' }],
  ['[\'key\'] is a field', '{.data[\'count\']}', DOC, { text: '12' }],
  ['[\'a.b\'] is read as .a.b', '{.data[\'key.with.dots\']}', DOC, { text: '8' }],
  ['a backslash keeps the dot in the key', '{.data.key\\.with\\.dots}', DOC, { text: '7' }],
  ['a word in a bracket key is an identifier', '{.data[\'count x\']}', DOC, { error: 'Could not find JSONPath in body: unrecognized identifier x' }],
  ['..name: the first in preorder', '{..name}', DOC, { text: '"a"' }],
  ['..dots', '{..dots}', DOC, { text: '8' }],
  ['.. finds no key: error', '{..nope}', DOC, { error: 'Could not find JSONPath in body: nope is not found' }],
  ['.* of a one-key map', '{.data.key.*}', DOC, { text: '{"dots":8}' }],
  ['.* of a string walks its bytes (uint8)', '{.text.*}', DOC, { text: '104' }],
  ['filter ==', '{.items[?(@.status=="fail")].name}', DOC, { text: '"b"' }],
  ['filter == finds several: the first', '{.items[?(@.status=="ok")].name}', DOC, { text: '"a"' }],
  ['filter with single quotes and spaces', '{.items[?(@.name == \'c\')].name}', DOC, { text: '"c"' }],
  ['filter: a JSON number against 1 is incompatible', '{.items[?(@.latency==120)].name}', DOC, { error: 'Could not find JSONPath in body: incompatible types for comparison' }],
  ['filter: against 120.0 it compares', '{.items[?(@.latency==120.0)].name}', DOC, { text: '"a"' }],
  ['filter >', '{.items[?(@.latency>200.0)].name}', DOC, { text: '"b"' }],
  ['filter <=', '{.items[?(@.latency<=120.0)].name}', DOC, { text: '"a"' }],
  ['filter on a key some items lack fails', '{.items[?(@.status=="ok")].name}', '{"items":[{"name":"a"},{"name":"b","status":"ok"}]}', { error: 'Could not find JSONPath in body: status is not found' }],
  ['filter: null compares with nothing', '{.items[?(@.latency>=0.0)].name}', '{"items":[{"name":"c","latency":null}]}', { error: 'Could not find JSONPath in body: invalid type for comparison' }],
  ['filter: a map compares with nothing', '{[?(@.a=="x")].n}', '[{"a":{},"n":1}]', { error: 'Could not find JSONPath in body: invalid type for comparison' }],
  ['filter of a map: floats as %v prints them', '{.a[?(@.x)]}', '{"a":{"m":1000000,"n":123456,"p":0.00001,"q":0.0001}}', { error: 'Could not find JSONPath in body: map[m:1e+06 n:123456 p:1e-05 q:0.0001] is not array or slice and cannot be filtered' }],
  ['a lone surrogate escape becomes U+FFFD', '{.a}', '{"a":"\\ud800"}', { text: '"�"' }],
  ['a JSON body that is a string', '{$}', '"up"', { text: '"up"' }],
  ['filter !=', '{.items[?(@.name!="a")].latency}', DOC, { text: '340.5' }],
  ['filter on strings orders bytes', '{.items[?(@.name<"b")].name}', DOC, { text: '"a"' }],
  ['filter on a bool', '{[?(@.on==true)].n}', '[{"on":false,"n":1},{"on":true,"n":2}]', { text: '2' }],
  ['filter < on bools is refused', '{[?(@.on<true)].n}', '[{"on":false,"n":1}]', { error: 'Could not find JSONPath in body: invalid type for comparison' }],
  ['filter: two paths', '{[?(@.a==@.b)].n}', '[{"a":1,"b":2,"n":"x"},{"a":3,"b":3,"n":"y"}]', { text: '"y"' }],
  ['filter with a bad operator', '{[?(@.a=1.0)].n}', '[{"a":1,"n":"x"}]', { error: 'Could not find JSONPath in body: unrecognized filter operator =' }],
  ['existence: null counts as present', '{.items[?(@.latency)].name}', '{"items":[{"name":"a"},{"name":"b","latency":null}]}', { text: '"b"' }],
  ['existence: an index error still counts', '{.items[?(@.tags[3])].name}', DOC, { text: '"a"' }],
  ['existence keeps the item, the next step then fails', '{.items[?(@.tags[0])].tags[0]}', DOC, { error: 'Could not find JSONPath in body: array index out of bounds: index 0, length 0' }],
  ['filter of a map: Go prints it with %v', '{.data.key[?(@.x)]}', DOC, { error: 'Could not find JSONPath in body: map[with:map[dots:8]] is not array or slice and cannot be filtered' }],
  ['filter of null', '{.data.none[?(@.x)]}', DOC, { error: 'Could not find JSONPath in body: <nil> is not array or slice and cannot be filtered' }],
  ['filter: @ of an array of numbers', '{.series[?(@>3.0)]}', DOC, { text: '4' }],
  ['range: the first name', '{range .items[*]}{.name}{end}', DOC, { text: '"a"' }],
  ['range: text inside comes first', '{range .items[*]}[{.name}]{end}', DOC, { text: '"["' }],
  ['range over nothing still walks its body once, on nil', '{range .empty[*]}{.name}{end}', DOC, { error: 'Could not find JSONPath in body: name is not found' }],
  ['nested ranges', '{range .items[*]}{range .tags[*]}{@}{end}{end}', DOC, { text: '"x"' }],
  ['{end} outside a range', '{end}', DOC, { error: 'Could not find JSONPath in body: not in range, nothing to end' }],
  ['after {end} the template goes on', '{range .empty[*]}{end}{.data.count}', DOC, { text: '12' }],
  ['a range without {end}: the parts after it run again on the document', '{range .items[*]}{.name}', DOC, { error: 'Could not find JSONPath in body: name is not found' }],
  ['an unknown word', '{foo}', DOC, { error: 'Could not find JSONPath in body: unrecognized identifier foo' }],
  ['text outside braces is a value', 'p95={.data.value}', DOC, { text: '"p95="' }],
  ['a JSONPath without braces is literal text', '$.data.value', DOC, { text: '"$.data.value"' }],
  ['a quoted string is a value', '{"ok"}', DOC, { text: '"ok"' }],
  ['an int literal', '{5}', DOC, { text: '5' }],
  ['digits past int64 become a float64', '{99999999999999999999}', DOC, { text: '100000000000000000000' }],
  ['an empty first action, then a value', '{.empty[0:0]}{.data.count}', DOC, { text: '12' }],
  ['unclosed action', '{.data.value', DOC, { error: 'unclosed action' }],
  ['unclosed action at a newline', '{.data\n}', DOC, { error: 'unclosed action' }],
  ['unterminated array', '{.series[0}', DOC, { error: 'unterminated array' }],
  ['invalid array index', '{.series[a]}', DOC, { error: 'invalid array index a' }],
  ['an array index that is not a number', '{.series[-]}', DOC, { error: 'array index - is not a number' }],
  ['unterminated filter', '{.items[?(@.a}', DOC, { error: 'unterminated filter' }],
  ['filter without ]', '{.items[?(@.a)}', DOC, { error: 'unclosed array expect ]' }],
  ['an empty right side is a syntax error', '{.items[?(@.a==)]}', DOC, { error: 'unrecognized character in action: U+003D \'=\'' }],
  ['unterminated quoted string', '{"abc}', DOC, { error: 'unterminated quoted string' }],
  ['a bad escape', '{"a\\q"}', DOC, { error: 'unquote string "a\\q" error invalid syntax' }],
  ['a tab is not a space', '{\t.a}', DOC, { error: 'unrecognized character in action: U+0009' }],
  ['.. twice', '{....a}', DOC, { error: 'invalid multiple recursive descent' }],
  ['..* is not a wildcard', '{..*}', DOC, { error: 'unrecognized character in action: U+002A \'*\'' }],
  ['a number with two dots', '{1.2.3}', DOC, { error: 'cannot parse number 1.2.3' }],
  ['a body that is not JSON', '{.a}', 'OK', RAW],
  ['an empty body', '{.a}', '', RAW],
  ['JSON followed by text', '{.a}', '{"a":1} trailing', RAW],
  ['a number beyond float64', '{.a}', '{"a":1e400}', RAW],
  ['a null document under {$}: Argo panics', '{$}', 'null', PANIC],
  ['a null document under a field', '{.a}', 'null', { error: 'Could not find JSONPath in body: a is not found' }],
  ['[0] in a range over nothing: Argo panics', '{range .empty[*]}{[0]}{end}', DOC, PANIC],
  ['a bad template is an Error even when the body is not JSON', '{.a', 'OK', { error: 'unclosed action' }],
];

describe('webValue reads an answer as Argo web provider does', () => {
  test.each(ROWS)('%s: %s', (_what, jsonPath, body, expected) => {
    const got = webValue(body, jsonPath);
    if (expected === RAW) expect(got).toEqual({ kind: 'raw', phase: 'Successful', text: body });
    else if (expected === PANIC) expect(got).toMatchObject({ kind: 'error', goPanic: true });
    else if ('text' in expected) expect(got).toMatchObject({ kind: 'value', text: expected.text });
    else expect(got).toEqual({ kind: 'error', message: expected.error });
  });

  test('no jsonPath at all is the default {$}', () => {
    expect(DEFAULT_WEB_JSONPATH).toBe('{$}');
    expect(webValue('{"a":[1]}', undefined)).toEqual({ kind: 'value', value: { a: [1] }, text: '{"a":[1]}' });
  });

  test('Go decodes JSON nested 10 000 deep, and no deeper', () => {
    const nested = (n: number): string => '['.repeat(n) + ']'.repeat(n);
    expect(webValue(nested(10_000), '{$}')).toMatchObject({ kind: 'value', text: nested(10_000) });
    expect(webValue(nested(10_001), '{$}')).toMatchObject({ kind: 'raw' });
  });
});

// The value the conditions see (decoded JSON: numbers are float64; Go's own ints and bytes as numbers)
// beside the text Argo records.
const VALUES: [string, unknown, string][] = [
  ['{.data.count}', 12, '12'],
  ['{.data.value}', 0.97, '0.97'],
  ['{.data.none}', null, 'null'],
  ['{.data.ok}', true, 'true'],
  ['{.data.label}', '<p95 & up>', '"\\u003cp95 \\u0026 up\\u003e"'],
  ['{.data.key}', { with: { dots: 8 } }, '{"with":{"dots":8}}'],
  ['{.items[?(@.latency>100.0)].tags}', ['x'], '["x"]'],
  ['{.series[1:3]}', 2, '2'],
  ['{.text.*}', 104, '104'],
  ['{5}', 5, '5'],
  ['{"ok"}', 'ok', '"ok"'],
  ['p95={.data.value}', 'p95=', '"p95="'],
];

describe('findFirst', () => {
  test.each(VALUES)('%s', (src, value, text) => {
    const compiled = compileJsonPath(src);
    if (!compiled.ok) throw new Error(compiled.error);
    expect(findFirst(compiled.path, JSON.parse(DOC))).toEqual({ ok: true, value, text });
  });

  test('finds nothing: Argo\'s error', () => {
    const compiled = compileJsonPath('{.empty[*]}');
    expect(compiled.ok && findFirst(compiled.path, JSON.parse(DOC))).toEqual({ ok: false, error: NO_VALUE });
  });

  test('a compiled path runs again after a range (client-go\'s parser would not: a range rewrites it)', () => {
    const compiled = compileJsonPath('{range .items[*]}{.name}{end}');
    if (!compiled.ok) throw new Error(compiled.error);
    const data = JSON.parse(DOC);
    expect(findFirst(compiled.path, data)).toEqual(findFirst(compiled.path, data));
  });

  test('escapes that make bytes no JSON string has are refused, with the reason', () => {
    expect(compileJsonPath('{"\\xff"}')).toEqual({ ok: false, error: expect.stringContaining('not supported') });
    expect(compileJsonPath('{"\\xc3\\xa9"}')).toMatchObject({ ok: true });
  });
});

// fmt's %v of a float64, as client-go's filter error prints a map's numbers (checked against Go).
const FLOATS_V: [number, string][] = [
  [1_000_000, '1e+06'],
  [123_456, '123456'],
  [1_234_567, '1.234567e+06'],
  [999_999.5, '999999.5'],
  [0.0001, '0.0001'],
  [0.00001, '1e-05'],
  [-0, '-0'],
  [-2.5, '-2.5'],
  [1.5e300, '1.5e+300'],
  [5e-324, '5e-324'],
];

describe('goFloatV', () => {
  test.each(FLOATS_V)('%p', (f, text) => expect(goFloatV(f)).toBe(text));
});
