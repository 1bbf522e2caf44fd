import { ConfigError, envName, helpText, loadConfig, parseDuration, type Schema } from './config.js';

const schema = {
  port: { kind: 'port', default: '9443', doc: 'p' },
  'tls-cert-file': { kind: 'string', required: true, doc: 'c' },
  'controller-username': { kind: 'list', default: 'sa:a', doc: 'u' },
  timeout: { kind: 'duration', default: '10s', doc: 't' },
  'leader-elect': { kind: 'bool', doc: 'l' },
  'log-level': { kind: 'level', default: 'info', doc: 'v' },
} as const satisfies Schema;

function values(argv: string[], env: Record<string, string> = {}) {
  const r = loadConfig(schema, argv, env);
  if (r.help) throw new Error('help');
  return r.values;
}

function problems(argv: string[], env: Record<string, string> = {}): string[] {
  try {
    loadConfig(schema, argv, env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}

describe('loadConfig', () => {
  it('applies defaults and requires required settings', () => {
    expect(values(['--tls-cert-file', 'c.pem'])).toEqual({
      port: 9443,
      'tls-cert-file': 'c.pem',
      'controller-username': ['sa:a'],
      timeout: 10000,
      'leader-elect': false,
      'log-level': 'info',
    });
    expect(problems([])).toEqual(['--tls-cert-file (or PHASED_ROLLOUT_TLS_CERT_FILE) is required']);
  });

  it('takes flags in both forms, repeats lists, and prefers flags over env', () => {
    const v = values(['--port=1', '--tls-cert-file', 'f', '--controller-username', 'a', '--controller-username=b', '--leader-elect', '--timeout', '500ms'], {
      PHASED_ROLLOUT_PORT: '2',
    });
    expect(v).toMatchObject({ port: 1, 'controller-username': ['a', 'b'], 'leader-elect': true, timeout: 500 });
  });

  it('reads env twins, comma-separating lists', () => {
    const v = values([], { PHASED_ROLLOUT_TLS_CERT_FILE: 'e', PHASED_ROLLOUT_CONTROLLER_USERNAME: 'x, y', PHASED_ROLLOUT_LEADER_ELECT: 'true' });
    expect(v).toMatchObject({ 'tls-cert-file': 'e', 'controller-username': ['x', 'y'], 'leader-elect': true });
  });

  it('lists every problem at once', () => {
    expect(problems(['--port', '70000', '--timeout', 'soon', '--log-level', 'loud', '--nope', '--leader-elect=maybe'])).toEqual([
      'unknown argument "--nope" (see --help)',
      '--port: "70000" must be a port number 0..65535',
      '--tls-cert-file (or PHASED_ROLLOUT_TLS_CERT_FILE) is required',
      '--timeout: "soon" must be a positive duration such as 500ms, 10s or 2m',
      '--leader-elect: "maybe" must be true or false',
      '--log-level: "loud" must be one of trace, debug, info, warn, error, fatal',
    ]);
    expect(problems(['--tls-cert-file'])).toEqual(['--tls-cert-file needs a value', '--tls-cert-file (or PHASED_ROLLOUT_TLS_CERT_FILE) is required']);
  });

  it('answers --help, and help lists every flag with its env twin', () => {
    expect(loadConfig(schema, ['--help'], {})).toEqual({ help: true });
    const text = helpText('prog', 'does things', schema);
    for (const flag of Object.keys(schema)) {
      expect(text).toContain(`--${flag}`);
      expect(text).toContain(envName(flag));
    }
  });

  it('takes 0 for a duration only where the setting allows it', () => {
    const withZero = { ...schema, wait: { kind: 'duration', zero: true, default: '2s', doc: 'w' } } as const satisfies Schema;
    const r = loadConfig(withZero, ['--tls-cert-file', 'c', '--wait', '0s'], {});
    expect(!r.help && r.values.wait).toBe(0);
    expect(problems(['--tls-cert-file', 'c', '--timeout', '0s'])).toEqual(['--timeout: "0s" must be a positive duration such as 500ms, 10s or 2m']);
    expect(() => loadConfig(withZero, ['--tls-cert-file', 'c', '--wait', 'x'], {})).toThrow(ConfigError);
  });

  it('returns a frozen object', () => {
    expect(Object.isFrozen(values(['--tls-cert-file', 'x']))).toBe(true);
  });
});

describe('parseDuration', () => {
  it.each([
    ['10s', 10000],
    ['500ms', 500],
    ['2m', 120000],
    ['1h', 3600000],
    ['1.5s', 1500],
    ['7', 7000],
    ['', undefined],
    ['-1s', undefined],
    ['10 s', undefined],
    ['1d', undefined],
  ])('%j -> %s', (t, ms) => expect(parseDuration(t)).toBe(ms));
});
