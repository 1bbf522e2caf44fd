import { httpVerdict } from './verdict.js';

describe('httpVerdict', () => {
  it.each([
    [200, '{"Status":"passing"}', 'pass', 'HTTP 200'],
    [204, '', 'pass', 'HTTP 204'],
    [299, 'ok', 'pass', 'HTTP 299'],
    [503, '[{"AggregatedStatus":"critical"}]', 'fail', 'HTTP 503: [{"AggregatedStatus":"critical"}]'],
    [429, 'warning', 'fail', 'HTTP 429: warning'],
    [500, '', 'fail', 'HTTP 500'],
    [404, 'not found\n', 'fail', 'HTTP 404: not found'],
    [302, '', 'fail', 'HTTP 302'],
    [408, 'proxy timeout', 'error', 'HTTP 408 (no verdict): proxy timeout'],
    [0, '', 'error', 'HTTP 0 (no verdict)'],
  ])('%i %j -> %s', (status, body, result, detail) => expect(httpVerdict(status, body)).toEqual({ result, detail, value: `HTTP ${status}` }));

  it('shows only the first 200 bytes of the body, whitespace folded', () => {
    const v = httpVerdict(503, `${'x'.repeat(150)}\n\n${'y'.repeat(300)}`);
    expect(v.detail).toBe(`HTTP 503: ${'x'.repeat(150)} ${'y'.repeat(48)}...`);
  });
});
