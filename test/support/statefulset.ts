// Builders of StatefulSets and AdmissionReviews shared by the integration tests.
import { KEYS } from '../../src/annotations.js';

/** statefulSet returns an opted-in StatefulSet manifest; `extra` merges into metadata.annotations. */
export function statefulSet(name: string, o: { replicas?: number; image?: string; annotations?: Record<string, string>; partition?: number } = {}) {
  const spec: {
    replicas: number;
    serviceName: string;
    selector: unknown;
    template: { metadata: unknown; spec: { containers: Record<string, unknown>[] } };
    updateStrategy?: unknown;
  } = {
    replicas: o.replicas ?? 3,
    serviceName: name,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: o.image ?? 'registry.example/app:1' }] } },
  };
  if (o.partition !== undefined) spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { partition: o.partition } };
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, annotations: o.annotations ?? { [KEYS.enabled]: 'true', [KEYS.query]: `e2e_gate{name="${name}"} == 1` } },
    spec,
  };
}

/** review wraps an object in an admission.k8s.io/v1 AdmissionReview. */
export function review(operation: 'CREATE' | 'UPDATE', object: unknown, oldObject?: unknown, uid = 'uid-1', username = 'alice') {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: 'apps', version: 'v1', kind: 'StatefulSet' },
      resource: { group: 'apps', version: 'v1', resource: 'statefulsets' },
      name: (object as { metadata: { name: string } }).metadata.name,
      namespace: 'default',
      operation,
      userInfo: { username },
      object,
      oldObject: oldObject ?? null,
      dryRun: false,
    },
  };
}
