// What a scenario must put back if it is stopped by a signal (Ctrl-C, or a test's timeout sending
// SIGTERM): its namespace, the peer process, the environment's own controller and webhook registration.
// `finally` blocks do not run when a signal ends the process, so main.ts runs these instead.

const tasks = new Set<() => Promise<unknown>>();

/** onAbort registers a clean-up for a signal; the returned function unregisters it (once done normally). */
export function onAbort(task: () => Promise<unknown>): () => void {
  tasks.add(task);
  return () => tasks.delete(task);
}

/** abortAll runs the registered clean-ups, the latest first; a failing one does not stop the others. */
export async function abortAll(): Promise<void> {
  for (const task of [...tasks].reverse()) {
    tasks.delete(task);
    await task().catch(() => undefined);
  }
}
