import { allowedTarget, notifyConfigProblems } from './notify.js';

describe('notifyConfigProblems', () => {
  it('accepts http(s) URLs and the two formats', () => {
    expect(notifyConfigProblems({ urls: ['https://hooks.example/T0/B0/x', 'http://127.0.0.1:9000/in'], format: 'slack' })).toEqual([]);
    expect(notifyConfigProblems({ urls: [], format: 'json' })).toEqual([]);
  });
  it('names every bad setting without echoing a URL (it may hold a token)', () => {
    expect(notifyConfigProblems({ urls: ['ftp://x/secret-token', 'https://ok'], format: 'teams' })).toEqual(['--notify-format: "teams" (allowed: json, slack)', '--notify-url #1: not an http(s) URL']);
  });
});

describe('allowedTarget (--allowed-notify-urls, security review item 9)', () => {
  const target = (url: string) => async () => ({ url, format: 'json' as const });
  it('passes a Secret\'s URL under a listed prefix, or any URL when the list is empty', async () => {
    expect(await allowedTarget(target('https://hooks.example/T0/x'), ['https://hooks.example/'], 'Secret ns/s')).toEqual({ url: 'https://hooks.example/T0/x', format: 'json' });
    expect(await allowedTarget(target('http://anything:1/'), [], 'Secret ns/s')).toEqual({ url: 'http://anything:1/', format: 'json' });
  });
  it('refuses one outside the list without echoing it (it may hold a token)', async () => {
    const err = await allowedTarget(target('http://169.254.169.254/latest?token=abc'), ['https://hooks.example/'], 'Secret ns/s').catch((e: Error) => e);
    expect((err as Error).message).toBe("Secret ns/s: its url is not under the controller's --allowed-notify-urls");
    expect((err as Error).message).not.toContain('169.254');
  });
});
