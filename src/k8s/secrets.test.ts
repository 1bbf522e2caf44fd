import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import { CREDENTIALS_LABEL, CredentialsError, loadCredentials } from './credentials.js';
import { loadNotifyTarget, NOTIFY_TARGET_LABEL } from './notify-target.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const core = (secret: V1Secret | number) =>
  ({
    readNamespacedSecret: async () => {
      if (typeof secret === 'number') throw Object.assign(new Error(`HTTP ${secret}`), { code: secret });
      return secret;
    },
  }) as unknown as CoreV1Api;
const secret = (label: string | undefined, data: Record<string, string>): V1Secret => ({ metadata: { name: 's', labels: label ? { [label]: 'true' } : {} }, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])) });

describe('loadCredentials', () => {
  it('reads a token, or basic auth, and a CA', async () => {
    expect(await loadCredentials(core(secret(CREDENTIALS_LABEL, { token: ' t0k \n', 'ca.crt': 'PEM' })), 'ns', 's')).toEqual({ token: 't0k', ca: 'PEM' });
    expect(await loadCredentials(core(secret(CREDENTIALS_LABEL, { username: 'u' })), 'ns', 's')).toEqual({ username: 'u', password: '' });
  });
  it.each([
    [404, 'Secret ns/s not found'],
    [403, 'not allowed to read Secret ns/s'],
    [500, 'cannot read Secret ns/s'],
    [secret(undefined, { token: 't' }), `Secret ns/s is not labelled ${CREDENTIALS_LABEL}: "true"; refusing to use it`],
    [secret(NOTIFY_TARGET_LABEL, { token: 't' }), 'is not labelled phased-rollout.io/prometheus-credentials'], // another purpose's label
    [secret(CREDENTIALS_LABEL, { other: 'x' }), 'has none of the keys token, username/password, ca.crt'],
  ])('refuses %j: %s', async (s, why) => {
    const err = await loadCredentials(core(s as V1Secret | number), 'ns', 's').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CredentialsError);
    expect((err as Error).message).toContain(why);
  });
});

describe('loadNotifyTarget', () => {
  it('reads the url and the format (json by default)', async () => {
    expect(await loadNotifyTarget(core(secret(NOTIFY_TARGET_LABEL, { url: 'https://hooks.example/x\n' })), 'ns', 's')).toEqual({ url: 'https://hooks.example/x', format: 'json' });
    expect(await loadNotifyTarget(core(secret(NOTIFY_TARGET_LABEL, { url: 'http://127.0.0.1:1/in', format: 'slack' })), 'ns', 's')).toEqual({ url: 'http://127.0.0.1:1/in', format: 'slack' });
  });
  it.each([
    [secret(CREDENTIALS_LABEL, { url: 'https://x' }), `is not labelled ${NOTIFY_TARGET_LABEL}`],
    [secret(NOTIFY_TARGET_LABEL, {}), 'has no http(s) url key'],
    [secret(NOTIFY_TARGET_LABEL, { url: 'ftp://x' }), 'has no http(s) url key'],
    [secret(NOTIFY_TARGET_LABEL, { url: 'https://x', format: 'teams' }), 'format must be one of json, slack'],
    [404, 'Secret ns/s not found'],
  ])('refuses %j: %s', async (s, why) => {
    await expect(loadNotifyTarget(core(s as V1Secret | number), 'ns', 's')).rejects.toThrow(why);
  });
});
