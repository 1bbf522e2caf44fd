import { applyWatchLine } from './json-watch.js';

describe('applyWatchLine', () => {
  const ev = (type: string, object: unknown) => JSON.stringify({ type, object });
  it.each([
    ['an added object', ev('ADDED', { metadata: { name: 'a', resourceVersion: '5' }, spec: 1 }), { kind: 'put', name: 'a', resourceVersion: '5', object: { metadata: { name: 'a', resourceVersion: '5' }, spec: 1 } }],
    ['a modified object', ev('MODIFIED', { metadata: { name: 'a', resourceVersion: '6' } }), { kind: 'put', name: 'a', resourceVersion: '6', object: { metadata: { name: 'a', resourceVersion: '6' } } }],
    ['a deleted object', ev('DELETED', { metadata: { name: 'a', resourceVersion: '7' } }), { kind: 'delete', name: 'a', resourceVersion: '7' }],
    ['a bookmark moves the resourceVersion only', ev('BOOKMARK', { metadata: { resourceVersion: '9' } }), { kind: 'bookmark', resourceVersion: '9' }],
    ['410 Gone: list again', ev('ERROR', { kind: 'Status', code: 410, message: 'too old resource version: 5 (9)' }), { kind: 'relist', reason: '410: too old resource version: 5 (9)' }],
    ['another error: watch again after a backoff', ev('ERROR', { kind: 'Status', code: 500, message: 'etcd' }), { kind: 'retry', reason: '500: etcd' }],
    ['an event without a name', ev('ADDED', { metadata: {} }), { kind: 'retry', reason: 'a ADDED event without a name' }],
    ['a bookmark without a resourceVersion', ev('BOOKMARK', {}), { kind: 'retry', reason: 'a bookmark without a resourceVersion' }],
    ['an unknown type', ev('SOMETHING', {}), { kind: 'retry', reason: 'an unknown watch event type "SOMETHING"' }],
    ['not JSON', '{"type": "ADD', { kind: 'retry', reason: 'a watch line is not JSON: {"type": "ADD' }],
    ['JSON that is not an object', 'null', { kind: 'retry', reason: 'an unknown watch event type undefined' }],
  ])('%s', (_, line, want) => expect(applyWatchLine(line)).toEqual(want));
});
