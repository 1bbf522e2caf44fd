import { urlAllowed } from './allowed.js';

describe('urlAllowed', () => {
  const list = ['http://prometheus.monitoring:9090', 'https://thanos.example.com/tenant-a/'];
  it.each([
    ['http://prometheus.monitoring:9090', true],
    ['http://prometheus.monitoring:9090/', true],
    ['http://prometheus.monitoring:9090/sub/path', true],
    ['https://thanos.example.com/tenant-a', true],
    ['https://thanos.example.com/tenant-a/x', true],
    ['https://thanos.example.com/tenant-ab', false], // not a path segment of the prefix
    ['https://thanos.example.com/tenant-b', false],
    ['http://thanos.example.com/tenant-a', false], // scheme differs
    ['http://prometheus.monitoring:9091', false], // port differs
    ['http://prometheus.monitoring.evil.com:9090', false],
    ['https://kubernetes.default.svc', false], // the API server
    ['http://169.254.169.254/latest/meta-data', false], // cloud metadata
    ['not a url', false],
  ])('%s -> %s', (url, want) => expect(urlAllowed(url, list)).toBe(want));

  it('an empty list allows everything', () => expect(urlAllowed('http://169.254.169.254', [])).toBe(true));
});
