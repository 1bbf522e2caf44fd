// Graceful SIGTERM/SIGINT: fail readiness, stop taking work, finish what is in flight, exit 0, all
// within a deadline (Kubernetes sends SIGKILL after terminationGracePeriodSeconds, 30 s by default;
// SPEC §5 asks for 10 s).
import type { Logger } from './logger.js';

/** ShutdownStep is one thing to stop, in order. */
export type ShutdownStep = { name: string; run: () => Promise<void> | void };

/**
 * onShutdown runs the steps once on SIGTERM or SIGINT and then calls `exit(0)`; if they take longer
 * than `deadlineMs`, it logs which step hung and exits 0 anyway (in-flight work is lost either way).
 */
export function onShutdown(log: Logger, steps: ShutdownStep[], deadlineMs = 9000, exit: (code: number) => void = process.exit): () => Promise<void> {
  let started = false;
  const run = async (): Promise<void> => {
    if (started) return;
    started = true;
    log.info({ deadlineMs }, 'shutting down');
    let current = '';
    const timer = setTimeout(() => {
      log.error({ step: current }, 'shutdown deadline passed; exiting');
      exit(0);
    }, deadlineMs);
    timer.unref();
    for (const step of steps) {
      current = step.name;
      try {
        await step.run();
      } catch (err) {
        log.warn({ err, step: step.name }, 'shutdown step failed');
      }
    }
    clearTimeout(timer);
    log.info('shutdown complete');
    exit(0);
  };
  process.once('SIGTERM', () => void run());
  process.once('SIGINT', () => void run());
  return run;
}
