// API clients that name this replica in their User-Agent. client-node's makeApiClient sends the same
// `kubernetes-client-javascript/x` agent from every process, so an audit log could not tell two
// controller replicas apart (they share one ServiceAccount). With the replica's identity in the agent,
// the API server's audit log says which replica made each write — what an operator needs after a
// leader handover, and what the leader-election chaos test checks.
import { createConfiguration, ServerConfiguration, setHeaderMiddleware, type KubeConfig, type RequestContext, type ResponseContext } from '@kubernetes/client-node';
import { requestLabels } from './request-labels.js';

/** RequestCounter counts API requests by verb and resource (a prom-client Counter fits). */
export interface RequestCounter {
  inc(labels: { verb: string; resource: string }): void;
}

/** userAgent is the User-Agent of one process: `program (identity)`. */
export function userAgent(program: string, identity: string): string {
  // Header values must be visible ASCII; a hostname is, but keep the agent safe whatever it holds.
  const safe = (s: string) => s.replace(/[^\x21-\x7e]/g, '_');
  return `${safe(program)} (${safe(identity)})`;
}

/**
 * SharedConnections applies the kubeconfig's authentication like client-node does, but keeps one
 * connection pool for every request. client-node 2.0.1 builds a new undici Agent on every request
 * (KubeConfig.applySecurityAuthentication), so each API call paid a fresh TLS handshake — tens of
 * milliseconds of latency and CPU on both sides per partition step, and one more every Lease renew.
 * Headers (a token read from a file, basic auth) are still applied per request; only the dispatcher,
 * whose TLS options come from the kubeconfig loaded once, is shared.
 */
export class SharedConnections {
  private shared: ReturnType<RequestContext['getDispatcher']>;

  constructor(private readonly kc: KubeConfig) {}

  getName(): string {
    return 'kubeconfig authentication, shared connection pool';
  }

  async applySecurityAuthentication(ctx: RequestContext): Promise<void> {
    await this.kc.applySecurityAuthentication(ctx);
    const fresh = ctx.getDispatcher();
    if (!fresh) return; // plain HTTP without TLS options: the global dispatcher pools already
    if (!this.shared) this.shared = fresh;
    else if (fresh !== this.shared) {
      ctx.setDispatcher(this.shared);
      void fresh.close(); // never used: nothing to drain
    }
  }
}

/** makeApiClient is client-node's KubeConfig.makeApiClient with our User-Agent (and, given one, a request counter). */
export function makeApiClient<T>(kc: KubeConfig, api: new (config: ReturnType<typeof createConfiguration>) => T, agent: string, counter?: RequestCounter, auth: SharedConnections = sharedFor(kc)): T {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the Kubernetes client configuration names no current cluster');
  return new api(
    createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: auth },
      middleware: [setHeaderMiddleware('User-Agent', agent)],
      ...(counter
        ? {
            promiseMiddleware: [
              {
                pre: async (ctx: RequestContext) => {
                  counter.inc(requestLabels(ctx.getHttpMethod(), ctx.getUrl()));
                  return ctx;
                },
                post: async (ctx: ResponseContext) => ctx,
              },
            ],
          }
        : {}),
    }),
  );
}

const pools = new WeakMap<KubeConfig, SharedConnections>();

/** sharedFor: one connection pool per KubeConfig, shared by every API client made from it. */
export function sharedFor(kc: KubeConfig): SharedConnections {
  let s = pools.get(kc);
  if (!s) pools.set(kc, (s = new SharedConnections(kc)));
  return s;
}
