// client-node sends requests with no timeout at all (TOOLCHAIN.md): a hung API call would hold a
// reconcile, or a Lease renew, forever. These options give one call an AbortSignal deadline.
import { Observable, type ConfigurationOptions, type RequestContext, type ResponseContext } from '@kubernetes/client-node';

/** FenceClosed says no write may start: this process is not (or no longer surely) the leader. */
export class FenceClosed extends Error {
  constructor(why: string) {
    super(`not writing: ${why}`);
    this.name = 'FenceClosed';
  }
}

/**
 * Fence returns how many ms a write started now may take (Infinity without leader election), or
 * throws FenceClosed. The elector's fence closes before the Lease can expire anywhere else.
 */
export type Fence = () => number;

/** openFence is the fence of a controller that runs without leader election. */
export const openFence: Fence = () => Infinity;

/**
 * withDeadline returns per-call options that abort the request after `ms` (appended to `opt`'s
 * middleware, so it composes with setHeaderOptions).
 */
export function withDeadline(ms: number, opt?: ConfigurationOptions): ConfigurationOptions {
  const timeout = Math.max(1, Math.floor(ms));
  return {
    ...opt,
    middleware: [
      ...(opt?.middleware ?? []),
      {
        // Per-call middleware is the Observable kind; client-node's Observable wraps a promise.
        pre: (ctx: RequestContext) => {
          ctx.setSignal(AbortSignal.timeout(timeout));
          return new Observable(Promise.resolve(ctx));
        },
        post: (res: ResponseContext) => new Observable(Promise.resolve(res)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}
