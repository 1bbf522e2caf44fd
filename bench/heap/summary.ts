// What is printed of a snapshot (Summary: totals, groups, strings and, if computed, the top retainers),
// and how the groups of two snapshots pair up into growth from one to the other.
import { dominators, groupRetained, topRetained, type RetainedObject } from './dominators.js';
import type { HeapGraph } from './graph.js';
import { byLargest, groupNodes, stringValues, totals, type GroupStat, type Totals } from './groups.js';

/** Summary is all that is printed of one snapshot; it is small, so the graph can be dropped once it is made. */
export interface Summary {
  totals: Totals;
  /** every group, largest self size first */
  groups: GroupStat[];
  /** every distinct string value, largest total size first */
  strings: GroupStat[];
  retained?: { top: RetainedObject[]; unreachable: number };
}

/** summarize reduces a graph to what is printed; retained sizes are computed unless withRetained is false. */
export function summarize(g: HeapGraph, { withRetained = true, topObjects = 15 } = {}): Summary {
  const grouping = groupNodes(g);
  const summary: Summary = { totals: totals(g), groups: grouping.groups, strings: stringValues(g) };
  if (withRetained) {
    const dom = dominators(g);
    const byGroup = groupRetained(g, grouping, dom);
    grouping.groups.forEach((s, i) => (s.retained = byGroup[i]!));
    summary.retained = { top: topRetained(g, dom, topObjects), unreachable: g.nodeCount - dom.reachable };
  }
  summary.groups = [...grouping.groups].sort(byLargest);
  return summary;
}

/** GroupDiff is one group in two snapshots and its growth from the first (a) to the second (b). */
export interface GroupDiff {
  key: string;
  a: GroupStat;
  b: GroupStat;
  count: number;
  size: number;
}

/** diffGroups pairs groups by key (absent on one side counts as zero) and orders them by growth in size, largest first. */
export function diffGroups(a: GroupStat[], b: GroupStat[]): GroupDiff[] {
  const zero = (key: string): GroupStat => ({ key, count: 0, size: 0 });
  const inA = new Map(a.map((s) => [s.key, s]));
  const inB = new Map(b.map((s) => [s.key, s]));
  const keys = new Set([...inA.keys(), ...inB.keys()]);
  const rows = [...keys].map((key) => {
    const sa = inA.get(key) ?? zero(key);
    const sb = inB.get(key) ?? zero(key);
    return { key, a: sa, b: sb, count: sb.count - sa.count, size: sb.size - sa.size };
  });
  return rows.sort((x, y) => y.size - x.size || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
}
