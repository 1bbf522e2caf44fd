// Label selectors (metav1.LabelSelector) matched against a label set, as the API server does:
// matchLabels and every matchExpression must hold. client-node has no matcher of its own.
import type { V1LabelSelector } from '@kubernetes/client-node';

/**
 * selectorMatches tells whether `labels` satisfy `selector`. A missing (null) selector matches nothing;
 * an empty one ({}) matches everything, as for a policy/v1 PodDisruptionBudget. An unknown operator
 * matches nothing (the API server would have refused it).
 */
export function selectorMatches(selector: V1LabelSelector | undefined | null, labels: Record<string, string> | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(l, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(l[e.key] ?? '')) return false;
        break;
      case 'NotIn':
        if (has && values.includes(l[e.key] ?? '')) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}
