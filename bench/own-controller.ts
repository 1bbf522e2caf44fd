// The controller as a child of a benchmark, in place of the harness's own (which is put back after):
// the harness's command line (.e2e/cmd/controller) at a chosen log level and with extra flags, so a
// benchmark measures the process at the level the chart ships (info) and can compare flag settings in
// one run. Stopped by its own handle, never by name. However the benchmark ends (its own finally, a
// Ctrl-C, a `timeout`'s SIGTERM, even a SIGKILL), the harness's controller is put back: a sentinel
// outlives the benchmark's process and does it once that process is gone, so the next test or
// scenario never waits for a rollout with no controller.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ROOT, sleep } from './e2e-env.js';

/** harnessController starts or stops the harness's controller by the pid it recorded (hack/e2e-proc.sh). */
export function harnessController(env: Record<string, string>, action: 'start' | 'stop'): void {
  execFileSync(resolve(ROOT, 'hack', 'e2e-proc.sh'), [action, 'controller'], { env: { ...process.env, PHASED_ROLLOUT_E2E_DIR: env.E2E_DIR }, stdio: 'ignore', timeout: 30_000 });
}

/**
 * sentinel starts a detached shell that waits for this process (`watched`) to end, however it ends, then stops the
 * own controller `pid` if it still runs (the same process: its start time is checked, pids are reused)
 * and starts the harness's controller again, if the environment is still up (its webhook runs) and the
 * controller is not running already (e2e-proc.sh start is a no-op then: a benchmark that put it back
 * itself is left as it is). A signal handler could not do this after a SIGKILL.
 */
export function sentinel(env: Record<string, string>, pid: number, watched = process.pid, proc = resolve(ROOT, 'hack', 'e2e-proc.sh')): void {
  const script = [
    // A process's start time (field 22 of its stat), empty once it is gone or a zombie.
    'st() { awk \'$3 != "Z" {print $22}\' "/proc/$1/stat" 2>/dev/null; }',
    `me=$(st ${watched}); own=$(st ${pid})`,
    `while [ -n "$me" ] && [ "$(st ${watched})" = "$me" ]; do sleep 0.5; done`,
    `if [ -n "$own" ] && [ "$(st ${pid})" = "$own" ]; then kill -TERM ${pid} 2>/dev/null; for _ in $(seq 1 100); do [ "$(st ${pid})" = "$own" ] || break; sleep 0.1; done; [ "$(st ${pid})" = "$own" ] && kill -KILL ${pid} 2>/dev/null; fi`,
    `if "${proc}" running webhook; then "${proc}" start controller; fi`,
  ].join('\n');
  spawn('setsid', ['bash', '-c', script], { detached: true, stdio: 'ignore', env: { ...process.env, PHASED_ROLLOUT_E2E_DIR: env.E2E_DIR } }).unref();
}

/** OwnController is one run of the controller started by a benchmark. */
export class OwnController {
  private stopping = false;
  /** set when the process exited without being asked to */
  exited: string | undefined;

  private constructor(readonly child: ChildProcess) {
    child.on('exit', (code, signal) => {
      if (!this.stopping) this.exited = `controller exited by itself (code ${code}, signal ${signal})`;
    });
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /**
   * start stops the harness's controller (or a previous own one, by the caller) and runs the same
   * command line at `logLevel` with `extra` flags, its output in `log`; resolves once /readyz answers.
   */
  static async start(env: Record<string, string>, o: { logLevel: string; extra?: string[]; log: string; bundle?: string }): Promise<OwnController> {
    harnessController(env, 'stop');
    let cmd = readFileSync(resolve(env.E2E_DIR ?? '', 'cmd', 'controller'), 'utf8').trim().replace(/--log-level \S+/, `--log-level ${o.logLevel}`);
    // `bundle`: another build of the controller (another commit's dist/bundle/controller.mjs), same flags.
    if (o.bundle) cmd = cmd.replace(/\S+\/dist\/bundle\/controller\.mjs/, o.bundle);
    const fd = openSync(o.log, 'a');
    // exec: the child's pid is the controller's own, for /proc.
    const own = new OwnController(spawn('bash', ['-c', `exec ${cmd} ${(o.extra ?? []).join(' ')}`], { stdio: ['ignore', fd, fd] }));
    if (own.child.pid) sentinel(env, own.child.pid);
    for (let i = 0; i < 300; i++) {
      if (own.exited) throw new Error(`${own.exited}; see ${o.log}`);
      if (await fetch(`${env.CONTROLLER_METRICS_URL}/readyz`).then((r) => r.ok, () => false)) return own;
      await sleep(100);
    }
    throw new Error(`the controller did not become ready in 30 s; see ${o.log}`);
  }

  /** stop ends this process (SIGTERM, SIGKILL after 15 s). */
  async stop(): Promise<void> {
    if (this.exited || this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.stopping = true;
    const gone = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await Promise.race([gone, sleep(15_000)]);
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}
