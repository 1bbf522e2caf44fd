import { credentialsAllowed, urlAllowed } from './allowed.js';

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
    // Escapes are decoded before the prefix is compared: an escaped separator or dot segment is refused.
    ['https://thanos.example.com/tenant-a/..%2ftenant-b', false],
    ['https://thanos.example.com/tenant-a/%2e%2e/tenant-b', false],
    ['https://thanos.example.com/tenant-a/../tenant-b', false],
    ['https://thanos.example.com/tenant-a/%zz', false],
    ['https://thanos.example.com/tenant%2Da/x', true], // an escaped letter is the same path
  ])('%s -> %s', (url, want) => expect(urlAllowed(url, list)).toBe(want));

  it('an empty list allows everything', () => expect(urlAllowed('http://169.254.169.254', [])).toBe(true));
});

describe('credentialsAllowed', () => {
  it.each([
    ['an empty list: a URL, but never credentials to it', 'http://attacker.example/', [], undefined, false],
    ['the operator\'s own --prometheus-url, list empty', 'http://prometheus:9090', [], 'http://prometheus:9090', true],
    ['listed', 'http://prometheus:9090/x', ['http://prometheus:9090'], undefined, true],
    ['not listed', 'http://other:9090', ['http://prometheus:9090'], 'http://prometheus:9090', false],
  ])('%s', (_n, url, list, operatorUrl, want) => expect(credentialsAllowed(url, list, operatorUrl)).toBe(want));
});
