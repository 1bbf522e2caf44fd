import type { KubernetesListObject, V1ConfigMap } from '@kubernetes/client-node';
import { listInPages, type ListPage } from './list-pages.js';

/** pages fakes an API server holding `n` objects at resourceVersion 42, served `limit` at a time. */
function pages(n: number, endless = false) {
  const asked: ListPage[] = [];
  const list = async (page?: ListPage): Promise<KubernetesListObject<V1ConfigMap>> => {
    if (!page) throw new Error('asked without a page');
    asked.push(page);
    const from = page._continue ? Number(page._continue) : 0;
    const items = Array.from({ length: Math.min(page.limit, n - from) }, (_, i) => ({ metadata: { name: `c${from + i}`, managedFields: [{ manager: 'x' }] } }));
    const next = from + page.limit;
    return { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '42', ...(endless || next < n ? { _continue: String(next) } : {}) }, items };
  };
  return { list, asked };
}

describe('listInPages', () => {
  it.each([
    { n: 0, limit: 500, requests: 1 },
    { n: 500, limit: 500, requests: 1 },
    { n: 501, limit: 500, requests: 2 },
    { n: 3000, limit: 500, requests: 6 },
    { n: 7, limit: 3, requests: 3 },
  ])('$n objects in pages of $limit: $requests request(s), every object once, in order, trimmed', async ({ n, limit, requests }) => {
    const { list, asked } = pages(n);
    const trimmed: string[] = [];
    const got = await listInPages(list, limit, (o) => {
      delete o.metadata?.managedFields;
      trimmed.push(o.metadata?.name ?? '');
    });
    expect(asked).toHaveLength(requests);
    expect(asked.every((p) => p.limit === limit)).toBe(true);
    expect(got.items.map((o) => o.metadata?.name)).toEqual(Array.from({ length: n }, (_, i) => `c${i}`));
    expect(trimmed).toHaveLength(n);
    expect(got.items.some((o) => o.metadata?.managedFields)).toBe(false);
    // The watch starts from the snapshot's resourceVersion; no continue token is left on the result.
    expect(got.metadata).toEqual({ resourceVersion: '42' });
  });

  it('trims each page before asking for the next', async () => {
    const { list } = pages(4);
    const order: string[] = [];
    await listInPages(
      async (p) => {
        order.push(`ask ${p?._continue ?? 'first'}`);
        return list(p);
      },
      2,
      (o) => order.push(`trim ${o.metadata?.name}`),
    );
    expect(order).toEqual(['ask first', 'trim c0', 'trim c1', 'ask 2', 'trim c2', 'trim c3']);
  });

  it('stops with an error when the API server never stops handing out continue tokens', async () => {
    const { list, asked } = pages(10, true);
    await expect(listInPages(list, 5, () => undefined, 4)).rejects.toThrow('the list did not end after 4 pages of 5');
    expect(asked).toHaveLength(4);
  });

  it('a failed page fails the whole list (the informer retries it from the start)', async () => {
    const { list } = pages(10);
    const failing = async (p?: ListPage) => {
      if (p?._continue) throw new Error('410 Gone: the continue token expired');
      return list(p);
    };
    await expect(listInPages(failing, 5, () => undefined)).rejects.toThrow('410 Gone');
  });
});
