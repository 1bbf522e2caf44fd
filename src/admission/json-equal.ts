// Equality of two JSON values (what JSON.parse returns): the webhook's template comparison.
// Why not node:util isDeepStrictEqual (used here before): it also checks prototypes, Symbol keys,
// property descriptors and the like, none of which a parsed body can carry, and under load it cost
// several microseconds per 7 KB template (bench:mutate, docs/benchmarks.md).

/** jsonEqual is true when a and b are the same JSON value: same type; objects with the same keys in any order. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    // NaN cannot come from JSON, but a hand-made object may carry it: NaN equals NaN, as for isDeepStrictEqual.
    return typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b);
  }
  const aArray = Array.isArray(a);
  if (aArray !== Array.isArray(b)) return false;
  if (aArray) {
    const x = a as unknown[], y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!jsonEqual(x[i], y[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>, y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  for (const k of keys) if (!Object.hasOwn(y, k) || !jsonEqual(x[k], y[k])) return false;
  return true;
}
