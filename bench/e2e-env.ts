// What the benchmarks that run against the end-to-end cluster share: .e2e/env and kubectl.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** ROOT is the repository root (bench files run from dist/bench). */
export const ROOT = resolve(import.meta.dirname, '..', '..');

/** e2eEnv reads .e2e/env written by hack/e2e-up.sh. */
export function e2eEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(resolve(ROOT, '.e2e', 'env'), 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)='(.*)'$/.exec(line);
    if (m) env[m[1] ?? ''] = m[2] ?? '';
  }
  return env;
}

/** kubectl runs the harness's kubectl and returns stdout (throws on failure). */
export function kubectl(env: Record<string, string>, args: string[], input?: string): string {
  return execFileSync(env.KUBECTL ?? 'kubectl', args, { env: { ...process.env, KUBECONFIG: env.KUBECONFIG }, input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

/** sleep waits. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** waitFor polls `check` every 200 ms. */
export async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** median of a list (the mean of the two middle values for an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}
