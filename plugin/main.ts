#!/usr/bin/env node
// kubectl-phased_rollout: `kubectl phased-rollout status|pause|resume|retry|promote|abort|wait|restore`.
// Thin shell over commands.ts, wait.ts and restore.ts.
import { AppsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, makeInformer, type V1StatefulSet } from '@kubernetes/client-node';
import { restore } from './restore.js';
import { apiErrorMessage } from '../src/k8s/errors.js';
import { runAction } from './actions.js';
import { dashboard } from './dashboard/main.js';
import { waitRollout } from './wait-watch.js';
import { historyTable, parseCommand, reportOf, statusJson, statusTable, USAGE, type StsRow } from './commands.js';

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
      // One StatefulSet named: its gates' last measurements below the table.
      const render = (rows: StsRow[]) => (cmd.output === 'json' ? statusJson(rows) : statusTable(rows, cmd.all, Date.now()) + (cmd.name && rows.length === 1 && rows[0] ? historyTable(rows[0], Date.now()) : ''));
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
    if (cmd.verb === 'restore') return await restore({ apps, core: kc.makeApiClient(CoreV1Api), objects: kc.makeApiClient(CustomObjectsApi) }, { ...cmd, namespace }, (line) => process.stdout.write(`${line}\n`));
    process.stdout.write(`${await runAction(apps, namespace, cmd.name, cmd.verb)}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`error: ${apiErrorMessage(err)}\n`);
    return 1;
  }
}

void main().then((code) => (process.exitCode = code));
