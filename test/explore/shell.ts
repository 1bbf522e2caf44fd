// What the exploration's controller (controller.ts) takes from the controller process's shell rather
// than from plan(): how long a background result is good for and what an overrun is worth
// (controller/background.ts, src/rollout/outcomes.ts), when a new hook attempt is written first
// (src/rollout/hook-steps.ts newAttempt), and the sealed status (src/rollout/status-seal.ts). One
// module, so that a measurement on an older tree replaces exactly these rules with that tree's own.
import { FRESH_MS } from '../../controller/background.js';
import { newAttempt } from '../../src/rollout/hook-steps.js';
import { overranPasses } from '../../src/rollout/outcomes.js';
import { sealStatus, trustedAnnotations, type StatusKeys } from '../../src/rollout/status-seal.js';

export { FRESH_MS, newAttempt, overranPasses, sealStatus, trustedAnnotations };
export { tokenOf } from '../../controller/background.js';

/** The controller's status key in every run (its Secret, as controller/status-key.ts makes it). */
export const STATUS_KEYS: StatusKeys = { sign: Buffer.alloc(32, 7), verify: [Buffer.alloc(32, 7)] };

/**
 * stale: a finished result nobody took for FRESH_MS after its end is measured again (Background.take);
 * counted from the end, so a check longer than the window is still taken.
 */
export function stale(_startedAtMs: number, doneAtMs: number, nowMs: number): boolean {
  return nowMs - doneAtMs > FRESH_MS;
}
