// A list in pages of `limit` objects, each object trimmed before the next page is asked for. Why: the
// controller's first list of every pod in the cluster came back as one response, and at 3,000 pods its
// JSON, the parsed objects and client-node's typed copies of them (a second full copy) lifted V8's heap
// to a high-water mark it keeps as RSS long after the cache holds only trimmed pods (docs/benchmarks.md,
// section 7). In pages, the most held at once is one page. This is what client-go's reflector does
// (its pager asks for 500 at a time).
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';

/** ListPage is what one request asks for: the page size and where the previous page ended. */
export interface ListPage {
  limit: number;
  _continue?: string;
}

/** PagedList lists one page; called without a page it may list everything at once. */
export type PagedList<T extends KubernetesObject> = (page?: ListPage) => Promise<KubernetesListObject<T>>;

/** MAX_PAGES bounds the loop: an API server that never stops handing out continue tokens is an error, not a hang. */
export const MAX_PAGES = 100_000;

/**
 * listInPages asks for pages of `limit` until the API server gives no continue token, calls `trim` on
 * every object as its page arrives, and returns one list: every item, and the last page's metadata
 * (a paginated list is one snapshot: every page carries the same resourceVersion, which the watch
 * then starts from) without its continue token.
 */
export async function listInPages<T extends KubernetesObject>(list: PagedList<T>, limit: number, trim: (obj: T) => void, maxPages = MAX_PAGES): Promise<KubernetesListObject<T>> {
  const items: T[] = [];
  let page = await list({ limit });
  for (let n = 1; ; n++) {
    for (const o of page.items) {
      trim(o);
      items.push(o);
    }
    const next = page.metadata?._continue;
    if (!next) break;
    if (n >= maxPages) throw new Error(`the list did not end after ${maxPages} pages of ${limit}`);
    page = await list({ limit, _continue: next });
  }
  const { _continue: _, ...metadata } = page.metadata ?? {};
  return { ...page, metadata, items };
}
