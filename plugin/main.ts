#!/usr/bin/env node
// kubectl-phased_rollout: `kubectl phased-rollout status|pause|resume|retry|promote|abort|wait`. Thin
// shell over commands.ts and wait.ts.
import { AppsV1Api, KubeConfig, makeInformer, type V1StatefulSet } from '@kubernetes/client-node';
import { apiErrorMessage } from '../src/k8s/errors.js';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { runAction } from './actions.js';
import { dashboardApp } from './dashboard/server.js';
import { watchCluster } from './dashboard/watch.js';
import { parseCommand, reportOf, statusJson, statusTable, USAGE, type StsRow } from './commands.js';
import { fromStatefulSet, judge, type Judgement } from './wait.js';

/** rowOf reads what the status output needs of a StatefulSet. */
function rowOf(s: V1StatefulSet): StsRow {
  return {
    namespace: s.metadata?.namespace ?? '',
    name: s.metadata?.name ?? '',
    annotations: s.metadata?.annotations ?? {},
    partition: s.spec?.updateStrategy?.rollingUpdate?.partition ?? 0,
    replicas: s.spec?.replicas ?? 1,
  };
}

/**
 * watchStatus follows StatefulSets with a list+watch (like `kubectl get -w`) and prints the output again
 * whenever what it shows changes (ages aside). Runs until SIGINT/SIGTERM.
 */
async function watchStatus(kc: KubeConfig, apps: AppsV1Api, namespace: string | undefined, name: string | undefined, render: (rows: StsRow[]) => string): Promise<number> {
  const path = namespace ? `/apis/apps/v1/namespaces/${namespace}/statefulsets` : '/apis/apps/v1/statefulsets';
  const list = () => (namespace ? apps.listNamespacedStatefulSet({ namespace, ...(name ? { fieldSelector: `metadata.name=${name}` } : {}) }) : apps.listStatefulSetForAllNamespaces());
  const informer = makeInformer<V1StatefulSet>(kc, name ? `${path}?fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}` : path, list);
  let shown = '';
  let timer: NodeJS.Timeout | undefined;
  const show = () => {
    const rows = informer.list().map(rowOf).sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
    const key = JSON.stringify(rows.map(reportOf));
    if (key === shown) return;
    const first = shown === '';
    shown = key;
    process.stdout.write((first ? '' : '\n') + render(rows));
  };
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(show, 100);
  };
  for (const ev of ['add', 'update', 'delete'] as const) informer.on(ev, soon);
  let stopping = false;
  return new Promise((resolve) => {
    informer.on('error', (err) => {
      // Stopping aborts the watch, which the informer reports as an error: not one to show.
      if (stopping) return;
      process.stderr.write(`error: ${apiErrorMessage(err)}\n`);
      resolve(1);
    });
    const stop = () => {
      stopping = true;
      void informer.stop().then(() => resolve(0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    informer.start().then(show, (err: unknown) => {
      process.stderr.write(`error: ${apiErrorMessage(err)}\n`);
      resolve(1);
    });
  });
}

/**
 * waitRollout follows one StatefulSet through a list+watch until wait.ts judges its rollout ended, or
 * the timeout. A watch that fails (the API server restarting, a dropped connection) is started again
 * with backoff, and the list it starts with catches up on what was missed; it never ends the wait.
 */
async function waitRollout(kc: KubeConfig, apps: AppsV1Api, namespace: string, cmd: { name: string; output: 'table' | 'json'; timeoutMs: number; failOnPause: boolean }): Promise<number> {
  const field = `metadata.name=${cmd.name}`;
  const informer = makeInformer<V1StatefulSet>(kc, `/apis/apps/v1/namespaces/${namespace}/statefulsets?fieldSelector=${encodeURIComponent(field)}`, () => apps.listNamespacedStatefulSet({ namespace, fieldSelector: field }));
  const print = (j: Judgement | { line: string; phase: string; code: number; partition?: number; revision?: string }) => {
    if (cmd.output === 'json') {
      process.stdout.write(JSON.stringify({ time: new Date().toISOString(), namespace, name: cmd.name, phase: j.phase, revision: j.revision, partition: j.partition, message: j.line, ...(j.code !== undefined ? { exitCode: j.code } : {}) }) + '\n');
    } else process.stdout.write(`${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} statefulset.apps/${cmd.name}: ${j.line}${j.code !== undefined ? ` (exit ${j.code})` : ''}\n`);
  };
  return new Promise((resolve) => {
    let shown = '';
    let ended = false;
    let last: Judgement | undefined;
    let synced = false;
    let backoffMs = 500;
    const end = (code: number) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      void informer.stop().finally(() => resolve(code));
    };
    const look = () => {
      if (ended || !synced) return;
      const s = informer.list().find((x) => x.metadata?.name === cmd.name);
      const j = judge(s ? fromStatefulSet(s) : undefined, { failOnPause: cmd.failOnPause });
      last = j;
      if (j.key !== shown || j.code !== undefined) {
        shown = j.key;
        print(j);
      }
      if (j.code !== undefined) end(j.code);
    };
    const timer = setTimeout(() => {
      print({ line: `timed out after ${cmd.timeoutMs / 1000}s; last: ${last?.line ?? 'nothing observed'}`, phase: last?.phase ?? 'Unknown', code: 2, ...(last ? { partition: last.partition, revision: last.revision } : {}) });
      end(2);
    }, cmd.timeoutMs);
    // client-node's informer reports a failed list or watch through 'error' and then stops; its
    // start() resolves either way, so an attempt counts as synced only if no error came during it.
    let attempt = 0;
    let failedAttempt = -1;
    const start = () => {
      if (ended) return;
      const mine = ++attempt;
      informer.start().then(
        () => {
          if (failedAttempt === mine) return;
          synced = true;
          backoffMs = 500;
          look();
        },
        (err: unknown) => retry(err),
      );
    };
    const retry = (err: unknown) => {
      if (ended) return;
      process.stderr.write(`watch of statefulset.apps/${cmd.name} failed (${apiErrorMessage(err)}); starting it again in ${backoffMs / 1000}s\n`);
      setTimeout(start, backoffMs);
      backoffMs = Math.min(backoffMs * 2, 10_000);
    };
    for (const ev of ['add', 'update', 'delete'] as const) informer.on(ev, look);
    informer.on('error', (err) => {
      failedAttempt = attempt;
      retry(err);
    });
    start();
  });
}

/**
 * dashboard serves the live page on 127.0.0.1 until SIGINT/SIGTERM. The token is random per run and
 * only printed; the page's files come from the package (plugin/dashboard/static), nothing from a CDN.
 */
async function dashboard(kc: KubeConfig, apps: AppsV1Api, namespace: string | undefined, port: number): Promise<number> {
  const token = randomBytes(32).toString('base64url');
  const source = await watchCluster(kc, namespace, (line) => process.stderr.write(`${line}\n`));
  const app = dashboardApp({
    source,
    token,
    scope: namespace ? `namespace ${namespace}` : 'all namespaces',
    staticDir: resolve(import.meta.dirname, '..', '..', 'plugin', 'dashboard', 'static'),
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

async function main(): Promise<number> {
  let cmd;
  try {
    cmd = parseCommand(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`error: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (cmd.verb === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const kc = new KubeConfig();
  if (cmd.kubeconfig) kc.loadFromFile(cmd.kubeconfig);
  else kc.loadFromDefault();
  const namespace = cmd.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  const apps = kc.makeApiClient(AppsV1Api);
  try {
    if (cmd.verb === 'status') {
      const render = (rows: StsRow[]) => (cmd.output === 'json' ? statusJson(rows) : statusTable(rows, cmd.all, Date.now()));
      if (cmd.watch) return await watchStatus(kc, apps, cmd.all ? undefined : namespace, cmd.name, render);
      const list = cmd.name
        ? { items: [await apps.readNamespacedStatefulSet({ name: cmd.name, namespace })] }
        : cmd.all
          ? await apps.listStatefulSetForAllNamespaces()
          : await apps.listNamespacedStatefulSet({ namespace });
      process.stdout.write(render(list.items.map(rowOf)));
      return 0;
    }
    if (cmd.verb === 'wait') return await waitRollout(kc, apps, namespace, cmd);
    if (cmd.verb === 'dashboard') return await dashboard(kc, apps, cmd.all ? undefined : namespace, cmd.port);
    process.stdout.write(`${await runAction(apps, namespace, cmd.name, cmd.verb)}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`error: ${apiErrorMessage(err)}\n`);
    return 1;
  }
}

void main().then((code) => (process.exitCode = code));
