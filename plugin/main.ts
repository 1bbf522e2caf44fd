#!/usr/bin/env node
// kubectl-phased_rollout: `kubectl phased-rollout status|pause|resume|retry`. Thin shell over commands.ts.
import { AppsV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { apiErrorMessage } from '../src/k8s/errors.js';
import { annotationPatch, parseCommand, statusTable, USAGE, type StsRow } from './commands.js';

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
      const list = cmd.name
        ? { items: [await apps.readNamespacedStatefulSet({ name: cmd.name, namespace })] }
        : cmd.all
          ? await apps.listStatefulSetForAllNamespaces()
          : await apps.listNamespacedStatefulSet({ namespace });
      const rows: StsRow[] = list.items.map((s) => ({
        namespace: s.metadata?.namespace ?? '',
        name: s.metadata?.name ?? '',
        annotations: s.metadata?.annotations ?? {},
        partition: s.spec?.updateStrategy?.rollingUpdate?.partition ?? 0,
        replicas: s.spec?.replicas ?? 1,
      }));
      process.stdout.write(statusTable(rows, cmd.all));
      return 0;
    }
    await apps.patchNamespacedStatefulSet({ name: cmd.name, namespace, body: annotationPatch(cmd.verb) }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    const done = { pause: 'paused', resume: 'resumed', retry: 'gate restarted' }[cmd.verb];
    process.stdout.write(`statefulset.apps/${cmd.name} ${done}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`error: ${apiErrorMessage(err)}\n`);
    return 1;
  }
}

void main().then((code) => (process.exitCode = code));
