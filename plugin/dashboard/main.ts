// The shell of `kubectl phased-rollout dashboard`: the watches, the express app on 127.0.0.1, the token.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { AppsV1Api, KubeConfig } from '@kubernetes/client-node';
import { runAction } from '../actions.js';
import { dashboardApp } from './server.js';
import { watchCluster } from './watch.js';

/**
 * dashboard serves the live page on 127.0.0.1 until SIGINT/SIGTERM. The token is random per run and
 * only printed; the page's files come from the package (plugin/dashboard/static), nothing from a CDN.
 */
export async function dashboard(kc: KubeConfig, apps: AppsV1Api, namespace: string | undefined, port: number): Promise<number> {
  const token = randomBytes(32).toString('base64url');
  const source = await watchCluster(kc, namespace, (line) => process.stderr.write(`${line}\n`));
  const app = dashboardApp({
    source,
    token,
    scope: namespace ? `namespace ${namespace}` : 'all namespaces',
    staticDir: staticDir(),
    act: (ns, name, verb) => runAction(apps, ns, name, verb),
  });
  const server = app.listen(port, '127.0.0.1');
  await new Promise<void>((ok, fail) => {
    server.once('listening', ok);
    server.once('error', fail);
  });
  const { port: bound } = server.address() as { port: number };
  process.stdout.write(`phased-rollout dashboard for ${namespace ? `namespace ${namespace}` : 'all namespaces'}: http://127.0.0.1:${bound}/?token=${token}\n(open it in a browser on this machine; Ctrl-C to stop)\n`);
  return new Promise((done) => {
    const stop = () => {
      server.closeAllConnections();
      server.close();
      void source.stop().then(() => done(0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/** staticDir: beside the bundle (dist/bundle/static, copied by hack/bundle.mjs), else the sources' folder. */
function staticDir(): string {
  const bundled = resolve(import.meta.dirname, 'static');
  return existsSync(resolve(bundled, 'index.html')) ? bundled : resolve(import.meta.dirname, '..', '..', '..', 'plugin', 'dashboard', 'static');
}
