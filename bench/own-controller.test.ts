// The sentinel of a benchmark's own controller, with real processes: hack/e2e-proc.sh over a state
// folder of its own (the harness's layout: cmd/, pids/, logs/), `sleep`s standing for the programs. The
// benchmark is SIGKILLed, which no signal handler could see: the own controller must be stopped and
// the harness's started again; with the environment down (no webhook), nothing is started.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { jest } from '@jest/globals';
import { sentinel } from './own-controller.js';

jest.setTimeout(30_000);

const PROC = resolve(import.meta.dirname, '..', 'hack', 'e2e-proc.sh');
const started: ChildProcess[] = [];
let dir: string;

const proc = (action: string, name: string): boolean => {
  try {
    execFileSync(PROC, [action, name], { env: { ...process.env, PHASED_ROLLOUT_E2E_DIR: dir }, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const alive = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;
const sleeper = () => {
  const c = spawn('sleep', ['60'], { stdio: 'ignore' });
  started.push(c);
  return c;
};
async function until(ok: () => boolean, ms = 15_000): Promise<void> {
  for (const end = Date.now() + ms; !ok(); ) {
    if (Date.now() > end) throw new Error('not within the time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'own-controller-'));
  mkdirSync(join(dir, 'cmd'));
  for (const name of ['webhook', 'controller']) writeFileSync(join(dir, 'cmd', name), 'sleep 60');
});
afterEach(() => {
  proc('stop', 'controller');
  proc('stop', 'webhook');
  for (const c of started) if (alive(c)) c.kill('SIGKILL');
  started.length = 0;
  rmSync(dir, { recursive: true, force: true });
});

describe("a benchmark's own controller", () => {
  it('is stopped, and the harness controller put back, once the benchmark is SIGKILLed', async () => {
    expect(proc('start', 'webhook')).toBe(true);
    const bench = sleeper();
    const own = sleeper();
    sentinel({ E2E_DIR: dir }, own.pid!, bench.pid!, PROC);
    await new Promise((r) => setTimeout(r, 700));
    expect(proc('running', 'controller')).toBe(false); // nothing while the benchmark runs
    bench.kill('SIGKILL');
    await until(() => !alive(own));
    await until(() => proc('running', 'controller'));
    expect(readFileSync(join(dir, 'pids', 'controller.pid'), 'utf8')).toMatch(/^\d+ \d+/);
  });

  it('starts nothing once the environment is down', async () => {
    const bench = sleeper();
    const own = sleeper();
    sentinel({ E2E_DIR: dir }, own.pid!, bench.pid!, PROC);
    bench.kill('SIGKILL');
    await until(() => !alive(own));
    await new Promise((r) => setTimeout(r, 1000));
    expect(proc('running', 'controller')).toBe(false);
  });
});
