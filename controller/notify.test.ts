import { notifyConfigProblems } from './notify.js';

describe('notifyConfigProblems', () => {
  it('accepts http(s) URLs and the two formats', () => {
    expect(notifyConfigProblems({ urls: ['https://hooks.example/T0/B0/x', 'http://127.0.0.1:9000/in'], format: 'slack' })).toEqual([]);
    expect(notifyConfigProblems({ urls: [], format: 'json' })).toEqual([]);
  });
  it('names every bad setting without echoing a URL (it may hold a token)', () => {
    expect(notifyConfigProblems({ urls: ['ftp://x/secret-token', 'https://ok'], format: 'teams' })).toEqual(['--notify-format: "teams" (allowed: json, slack)', '--notify-url #1: not an http(s) URL']);
  });
});
