import { requestLabels } from './request-labels.js';

describe('requestLabels', () => {
  it.each([
    ['GET', 'https://k:6443/apis/apps/v1/statefulsets', 'list', 'statefulsets'],
    ['GET', 'https://k:6443/apis/apps/v1/namespaces/ns/statefulsets?labelSelector=x', 'list', 'statefulsets'],
    ['GET', 'https://k:6443/api/v1/pods?watch=true&resourceVersion=5', 'watch', 'pods'],
    ['PATCH', 'https://k:6443/apis/apps/v1/namespaces/ns/statefulsets/db', 'patch', 'statefulsets'],
    ['GET', 'https://k:6443/apis/apps/v1/namespaces/ns/controllerrevisions/db-1', 'get', 'controllerrevisions'],
    ['POST', 'https://k:6443/api/v1/namespaces/ns/events', 'create', 'events'],
    ['PATCH', 'https://k:6443/api/v1/namespaces/ns/events/e1', 'patch', 'events'],
    ['DELETE', 'https://k:6443/api/v1/namespaces/ns/pods/db-0', 'delete', 'pods'],
    ['PUT', 'https://k:6443/apis/coordination.k8s.io/v1/namespaces/s/leases/l', 'update', 'leases'],
    ['GET', 'https://k:6443/api/v1/namespaces/ns/secrets/creds', 'get', 'secrets'],
    ['PATCH', 'https://k:6443/api/v1/namespaces/ns/pods/db-0/status', 'patch', 'pods/status'],
    ['GET', 'https://k:6443/api/v1/namespaces', 'list', 'namespaces'],
    ['GET', 'https://k:6443/version', 'get', 'unknown'],
  ])('%s %s -> %s %s', (method, url, verb, resource) => expect(requestLabels(method, url)).toEqual({ verb, resource }));
});
