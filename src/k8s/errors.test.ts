import { apiErrorCode, apiErrorMessage } from './errors.js';

describe('apiErrorMessage', () => {
  it('extracts code and Status message from a client-node error', () => {
    const err = Object.assign(new Error('HTTP-Code: 403\nMessage: Unknown API Status Code!\nBody: ...'), {
      code: 403,
      body: JSON.stringify({ kind: 'Status', message: 'leases.coordination.k8s.io "x" is forbidden' }),
    });
    expect(apiErrorCode(err)).toBe(403);
    expect(apiErrorMessage(err)).toBe('403: leases.coordination.k8s.io "x" is forbidden');
  });
  it('falls back to the first line of any error', () => {
    expect(apiErrorMessage(new Error('connect ECONNREFUSED 127.0.0.1:6443\nmore'))).toBe('connect ECONNREFUSED 127.0.0.1:6443');
    expect(apiErrorMessage(Object.assign(new Error('x'), { code: 500, body: 'plain text' }))).toBe('500: plain text');
  });
});
