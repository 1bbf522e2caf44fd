import { valuesOf, verdictOf } from './verdict.js';

const ok = (data: unknown) => JSON.stringify({ status: 'success', data });

describe('verdictOf (SPEC §4.3)', () => {
  it.each([
    ['vector with a sample', 200, ok({ resultType: 'vector', result: [{ metric: {}, value: [1, '1'] }] }), 'pass'],
    ['vector with a zero sample (a value, not NaN)', 200, ok({ resultType: 'vector', result: [{ metric: {}, value: [1, '0'] }] }), 'pass'],
    ['vector with NaN and a number', 200, ok({ resultType: 'vector', result: [{ value: [1, 'NaN'] }, { value: [1, '2'] }] }), 'pass'],
    ['empty vector', 200, ok({ resultType: 'vector', result: [] }), 'fail'],
    ['only NaN samples', 200, ok({ resultType: 'vector', result: [{ value: [1, 'NaN'] }] }), 'fail'],
    ['matrix with samples', 200, ok({ resultType: 'matrix', result: [{ values: [[1, 'NaN'], [2, '3']] }] }), 'pass'],
    ['matrix with only NaN', 200, ok({ resultType: 'matrix', result: [{ values: [[1, 'NaN']] }] }), 'fail'],
    ['empty matrix', 200, ok({ resultType: 'matrix', result: [] }), 'fail'],
    ['scalar 1', 200, ok({ resultType: 'scalar', result: [1, '1'] }), 'pass'],
    ['scalar -2.5', 200, ok({ resultType: 'scalar', result: [1, '-2.5'] }), 'pass'],
    ['scalar 0', 200, ok({ resultType: 'scalar', result: [1, '0'] }), 'fail'],
    ['scalar NaN', 200, ok({ resultType: 'scalar', result: [1, 'NaN'] }), 'fail'],
    ['scalar +Inf', 200, ok({ resultType: 'scalar', result: [1, '+Inf'] }), 'fail'],
    ['status error', 400, JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error' }), 'error'],
    ['status error with 200', 200, JSON.stringify({ status: 'error', error: 'x' }), 'error'],
    ['HTTP 503 with JSON', 503, ok({ resultType: 'vector', result: [{ value: [1, '1'] }] }), 'error'],
    ['HTTP 401 text', 401, 'Unauthorized', 'error'],
    ['garbage', 200, '<html>proxy error</html>', 'error'],
    ['JSON without data', 200, '{"status":"success"}', 'error'],
    ['string result type', 200, ok({ resultType: 'string', result: [1, 'x'] }), 'error'],
    ['malformed scalar', 200, ok({ resultType: 'scalar', result: 'x' }), 'error'],
    ['vector not a list', 200, ok({ resultType: 'vector', result: {} }), 'error'],
    // Prometheus writes infinities as "+Inf" and "-Inf": values, not NaN (issue 11 item 7).
    ['vector +Inf', 200, ok({ resultType: 'vector', result: [{ value: [1, '+Inf'] }] }), 'pass'],
    ['vector -Inf', 200, ok({ resultType: 'vector', result: [{ value: [1, '-Inf'] }] }), 'pass'],
    ['matrix with only infinities', 200, ok({ resultType: 'matrix', result: [{ values: [[1, '+Inf'], [2, '-Inf']] }] }), 'pass'],
    ['scalar -Inf', 200, ok({ resultType: 'scalar', result: [1, '-Inf'] }), 'fail'],
    ['scalar in exponent form', 200, ok({ resultType: 'scalar', result: [1, '1e-3'] }), 'pass'],
    // A value that is no float at all is a lying Prometheus: error, never a fail that counts.
    ['vector with a non-number value', 200, ok({ resultType: 'vector', result: [{ value: [1, 'banana'] }] }), 'error'],
    ['vector with a numeric (not string) value', 200, ok({ resultType: 'vector', result: [{ value: [1, 1] }] }), 'error'],
    ['scalar with an empty value', 200, ok({ resultType: 'scalar', result: [1, ''] }), 'error'],
  ])('%s -> %s', (_name, status, body, want) => {
    expect(verdictOf(status, body).result).toBe(want);
  });

  it('explains errors without echoing more than a bounded part of the body', () => {
    const v = verdictOf(400, JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'x'.repeat(10_000) }));
    expect(v.detail.length).toBeLessThan(300);
    expect(v.detail).toContain('bad_data');
  });
});

describe('the measured value (for the history)', () => {
  it.each([
    [ok({ resultType: 'vector', result: [{ value: [1, '0.25'] }] }), '0.25'],
    [ok({ resultType: 'vector', result: [{ value: [1, 'NaN'] }, { value: [1, '2'] }, { value: [1, '3'] }] }), '2 (+1)'],
    [ok({ resultType: 'vector', result: [] }), 'no samples'],
    [ok({ resultType: 'vector', result: [{ value: [1, 'NaN'] }] }), 'NaN'],
    [ok({ resultType: 'scalar', result: [1, '1e-3'] }), '1e-3'],
  ])('%s: %j', (body, value) => expect(verdictOf(200, body).value).toBe(value));
  it('an error has none', () => expect(verdictOf(503, 'x').value).toBeUndefined());
});

describe('valuesOf (comparison gates)', () => {
  it.each([
    [ok({ resultType: 'vector', result: [{ value: [1, '1'] }, { value: [1, 'NaN'] }] }), [1, NaN]],
    [ok({ resultType: 'matrix', result: [{ values: [[1, '1'], [2, '2']] }, { values: [[1, '+Inf']] }] }), [1, 2, Infinity]],
    [ok({ resultType: 'vector', result: [] }), []],
    [ok({ resultType: 'scalar', result: [1, '4'] }), [4]],
  ])('%s', (body, want) => expect(valuesOf(200, body)).toEqual(want));
  it.each([
    [400, JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error' })],
    [200, 'not json'],
    [200, ok({ resultType: 'vector', result: [{ value: [1, 'banana'] }] })],
    [200, ok({ resultType: 'string', result: [1, 'x'] })],
  ])('HTTP %i %s is an error, never values', (status, body) => expect(valuesOf(status, body)).toMatchObject({ result: 'error' }));
});
