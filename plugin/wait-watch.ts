// The shell of `kubectl phased-rollout wait`: a list+watch of one StatefulSet feeding wait.ts's judge.
import { makeInformer, type AppsV1Api, type KubeConfig, type V1StatefulSet } from '@kubernetes/client-node';
import { apiErrorMessage } from '../src/k8s/errors.js';
import { fromStatefulSet, judge, type Judgement } from './wait.js';

/**
 * waitRollout follows one StatefulSet through a list+watch until wait.ts judges its rollout ended, or
 * the timeout. A watch that fails (the API server restarting, a dropped connection) is started again
 * with backoff, and the list it starts with catches up on what was missed; it never ends the wait.
 */
export async function waitRollout(kc: KubeConfig, apps: AppsV1Api, namespace: string, cmd: { name: string; output: 'table' | 'json'; timeoutMs: number; failOnPause: boolean }): Promise<number> {
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

