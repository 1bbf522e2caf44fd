// Child processes of the built entry points (dist/), with their stdout collected as JSON lines.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { runtimeEnv } from '../../bench/runtime-env.js';

/** ROOT is the repository root. */
export const ROOT = resolve(import.meta.dirname, '..', '..');

/** distEntry returns the path of a built entry point, failing clearly when `npm run build` was not run. */
/**
 * shipped is the bundle of a program as users run it (dist/bundle, made by npm run build through
 * hack/bundle.mjs; the image carries the same files): tests start what ships.
 */
export function shipped(program: 'controller' | 'webhook' | 'plugin'): string {
  return distEntry(`bundle/${program}.mjs`);
}

export function distEntry(rel: string): string {
  const p = resolve(ROOT, 'dist', rel);
  if (!existsSync(p)) throw new Error(`${p} is missing: run \`npm run build\` first (npm test does)`);
  return p;
}

/** freePort asks the kernel for a free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
}

/** Child is a spawned process with its output. */
export interface Child {
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  lines: () => Record<string, unknown>[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** start spawns `node <entry> ...args` with the current Node binary. */
export function start(entry: string, args: string[], env: Record<string, string> = {}): Child {
  // A bundle runs with the environment the image gives it (hack/runtime.env).
  const shippedEnv = entry.startsWith(resolve(ROOT, 'dist', 'bundle')) ? runtimeEnv(ROOT) : {};
  const proc = spawn(process.execPath, [entry, ...args], { env: { ...process.env, ...shippedEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => proc.once('exit', (code, signal) => res({ code, signal })));
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { proc, stdout: () => out, stderr: () => err, lines, exited };
}
