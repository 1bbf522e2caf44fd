import { fileToken, inClusterAccess, kubeconfigAccess } from './api-access.js';

const files: Record<string, string> = {
  '/cfg/ca.crt': 'CA-FILE',
  '/cfg/certs/me.crt': 'CERT-FILE',
  '/cfg/certs/me.key': 'KEY-FILE',
  '/cfg/token': 'file-token\n',
  '/sa/token': 'sa-token\n',
  '/sa/ca.crt': 'SA-CA',
};
const readFile = (p: string) => {
  const f = files[p];
  if (f === undefined) throw new Error(`ENOENT: ${p}`);
  return Buffer.from(f);
};
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** config is a kubeconfig (JSON is YAML) with one context `c` of cluster `k` and user `u`. */
const config = (cluster: Record<string, unknown>, user?: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ 'current-context': 'c', contexts: [{ name: 'c', context: { cluster: 'k', ...(user ? { user: 'u' } : {}) } }], clusters: [{ name: 'k', cluster }], users: user ? [{ name: 'u', user }] : [], ...extra });

/** view is what a test compares: the server, the TLS material as text, the token. */
const view = (text: string) => {
  const a = kubeconfigAccess(text, '/cfg/kubeconfig', readFile);
  return { server: a.server.href, ca: a.tls.ca?.toString(), cert: a.tls.cert?.toString(), key: a.tls.key?.toString(), verify: a.tls.rejectUnauthorized, token: a.token() };
};

describe('kubeconfigAccess', () => {
  it.each([
    ['a token and a CA file relative to the kubeconfig', config({ server: 'https://127.0.0.1:6443', 'certificate-authority': 'ca.crt' }, { token: 't0' }), { server: 'https://127.0.0.1:6443/', ca: 'CA-FILE', cert: undefined, key: undefined, verify: true, token: 't0' }],
    ['inline data', config({ server: 'https://api.example:443/prefix', 'certificate-authority-data': b64('CA-DATA') }, { 'client-certificate-data': b64('C'), 'client-key-data': b64('K') }), { server: 'https://api.example/prefix', ca: 'CA-DATA', cert: 'C', key: 'K', verify: true, token: undefined }],
    ['certificate files, absolute and relative', config({ server: 'https://h:1' }, { 'client-certificate': '/cfg/certs/me.crt', 'client-key': 'certs/me.key' }), { server: 'https://h:1/', ca: undefined, cert: 'CERT-FILE', key: 'KEY-FILE', verify: true, token: undefined }],
    ['a token file, read trimmed', config({ server: 'https://h:1', 'insecure-skip-tls-verify': true }, { tokenFile: 'token' }), { server: 'https://h:1/', ca: undefined, cert: undefined, key: undefined, verify: false, token: 'file-token' }],
    ['no user at all', config({ server: 'https://h:1' }), { server: 'https://h:1/', ca: undefined, cert: undefined, key: undefined, verify: true, token: undefined }],
    ['a token file wins over a token (client-go: it is read again as it rotates)', config({ server: 'https://h:1' }, { token: 'inline', tokenFile: '/cfg/token' }), { server: 'https://h:1/', ca: undefined, cert: undefined, key: undefined, verify: true, token: 'file-token' }],
    ['block YAML', 'current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n  cluster: {server: "https://h:2"}\nusers:\n- name: u\n  user: {token: yaml}\n', { server: 'https://h:2/', ca: undefined, cert: undefined, key: undefined, verify: true, token: 'yaml' }],
  ])('%s', (_, text, want) => expect(view(text)).toEqual(want));

  it.each([
    ['not YAML', 'a: [', /kubeconfig \/cfg\/kubeconfig: not YAML/],
    ['no current-context', JSON.stringify({ contexts: [] }), /no current-context/],
    ['a context that is not there', JSON.stringify({ 'current-context': 'x', contexts: [{ name: 'c', context: {} }] }), /no context named "x"/],
    ['a cluster that is not there', JSON.stringify({ 'current-context': 'c', contexts: [{ name: 'c', context: { cluster: 'gone' } }], clusters: [] }), /no cluster named "gone"/],
    ['a plain-HTTP server', config({ server: 'http://h:8080' }, { token: 't' }), /server must be https \(it is http:\)/],
    ['a server that is not a URL', config({ server: 'https://exa mple:1' }, { token: 't' }), /server "https:\/\/exa mple:1" is not a URL/],
    ['a proxy', config({ server: 'https://h:1', 'proxy-url': 'http://proxy:3128' }, { token: 't' }), /cluster "k" sets proxy-url, which this program does not support/],
    ['a CA with insecure-skip-tls-verify', config({ server: 'https://h:1', 'certificate-authority-data': b64('CA'), 'insecure-skip-tls-verify': true }, { token: 't' }), /sets both a certificate authority and insecure-skip-tls-verify/],
    ['a token file that cannot be read', config({ server: 'https://h:1' }, { tokenFile: 'gone' }), /ENOENT: \/cfg\/gone/],
    ['an exec plugin', config({ server: 'https://h:1' }, { exec: { command: 'aws' } }), /user "u" authenticates with exec: this program supports token, tokenFile and client certificates/],
    ['basic auth', config({ server: 'https://h:1' }, { username: 'a', password: 'b' }), /authenticates with username, password/],
    ['a certificate without its key', config({ server: 'https://h:1' }, { 'client-certificate': '/cfg/certs/me.crt' }), /without its key/],
    ['a CA file that is missing', config({ server: 'https://h:1', 'certificate-authority': 'nope.crt' }, { token: 't' }), /ENOENT: \/cfg\/nope.crt/],
  ])('refuses %s', (_, text, want) => expect(() => kubeconfigAccess(text, '/cfg/kubeconfig', readFile)).toThrow(want));
});

describe('kubeconfigAccess, tls-server-name', () => {
  it('is the name the server certificate is checked against', () => {
    expect(kubeconfigAccess(config({ server: 'https://10.0.0.1:6443', 'tls-server-name': 'kubernetes.default' }), '/cfg/kubeconfig', readFile).tls.servername).toBe('kubernetes.default');
  });
});

describe('inClusterAccess', () => {
  it('reads the service host and port, the CA and the token', () => {
    const a = inClusterAccess({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, readFile, '/sa');
    expect([a.server.href, a.tls.ca?.toString(), a.tls.rejectUnauthorized, a.token()]).toEqual(['https://10.96.0.1/', 'SA-CA', true, 'sa-token']);
  });

  it('brackets an IPv6 service host', () => {
    expect(inClusterAccess({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, readFile, '/sa').server.hostname).toBe('[fd00::1]');
  });

  it.each([
    ['outside a cluster', {}, '/sa', /not running in a cluster .*give --kubeconfig/],
    ['without a mounted token', { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '443' }, '/none', /ENOENT: \/none\/token/],
  ])('fails %s', (_, env, dir, want) => expect(() => inClusterAccess(env, readFile, dir)).toThrow(want));
});

describe('fileToken', () => {
  it('reads the file again once a minute (the kubelet rotates a projected token)', () => {
    let now = 0;
    let token = 'one';
    let reads = 0;
    const read = () => {
      reads++;
      return Buffer.from(token);
    };
    const t = fileToken('/t', read, () => now);
    expect(t()).toBe('one');
    token = 'two';
    now = 59_999;
    expect([t(), reads]).toEqual(['one', 1]);
    now = 60_000;
    expect([t(), reads]).toEqual(['two', 2]);
  });

  it('keeps the last token when a later read fails, and reads again at the next call; the first read must succeed', () => {
    let now = 0;
    let fail = false;
    const t = fileToken('/t', () => {
      if (fail) throw new Error('EACCES');
      return Buffer.from(`tok-${now}`);
    }, () => now);
    expect(t()).toBe('tok-0');
    [fail, now] = [true, 60_000];
    expect(t()).toBe('tok-0');
    fail = false;
    expect(t()).toBe('tok-60000');
    expect(() => fileToken('/t', () => { throw new Error('ENOENT'); })()).toThrow('ENOENT');
  });
});
