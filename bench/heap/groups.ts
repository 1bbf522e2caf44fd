// Self sizes by group: totals per node type, groups of nodes by type and name (objects by constructor),
// and string values counted apart. The keys are cut to NAME_WIDTH characters on one line.
import type { HeapGraph } from './graph.js';

/** Stat is a count of nodes and the sum of their self sizes in bytes. */
export interface Stat {
  count: number;
  size: number;
}

/** GroupStat is a Stat for one group key (or one string value); retained is set once dominators are known. */
export interface GroupStat extends Stat {
  key: string;
  retained?: number;
}

/** Totals are the count and self size of all nodes, and per node type, largest first. */
export interface Totals extends Stat {
  byType: GroupStat[];
}

/** NAME_WIDTH is how much of a name or string value is kept: enough to recognise a label value or a resourceVersion. */
export const NAME_WIDTH = 80;

/** STRING_TYPE is the node type whose name is the string's value; V8 names cons and sliced strings only by their type. */
const STRING_TYPE = 'string';
const STRING_TYPES = new Set([STRING_TYPE, 'concatenated string', 'sliced string']);

/** truncate keeps the first width characters of one line of text, marking a cut with an ellipsis. */
export function truncate(text: string, width = NAME_WIDTH): string {
  const line = text.replace(/[\r\n\t]/g, ' ');
  return line.length > width ? `${line.slice(0, width)}…` : line;
}

/** groupKey names the group of a node: strings by type alone (their values are counted apart), others by type:name. */
export function groupKey(type: string, name: string): string {
  return STRING_TYPES.has(type) ? type : `${type}:${truncate(name)}`;
}

/** byLargest orders groups by size, then by key so that equal sizes print in a stable order. */
export function byLargest(a: GroupStat, b: GroupStat): number {
  return b.size - a.size || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/** totals counts all nodes and their self sizes, overall and per node type. */
export function totals(g: HeapGraph): Totals {
  const count = new Float64Array(g.nodeTypeNames.length);
  const size = new Float64Array(g.nodeTypeNames.length);
  let all = 0;
  for (let i = 0; i < g.nodeCount; i++) {
    const t = g.nodeType[i]!;
    count[t]!++;
    size[t]! += g.selfSize[i]!;
    all += g.selfSize[i]!;
  }
  const byType = g.nodeTypeNames.map((key, t) => ({ key, count: count[t]!, size: size[t]! })).filter((s) => s.count > 0);
  return { count: g.nodeCount, size: all, byType: byType.sort(byLargest) };
}

/** Grouping is the group of each node (an index into groups) and the stats of each group. */
export interface Grouping {
  groups: GroupStat[];
  nodeGroup: Uint32Array;
}

/** groupNodes sums nodes by groupKey; the key is built once per distinct (type, name) pair, not once per node. */
export function groupNodes(g: HeapGraph): Grouping {
  const groups: GroupStat[] = [];
  const byKey = new Map<string, number>();
  const byPair = new Map<number, number>();
  const nodeGroup = new Uint32Array(g.nodeCount);
  const stride = g.strings.length + 1;
  for (let i = 0; i < g.nodeCount; i++) {
    const pair = g.nodeType[i]! * stride + g.nodeName[i]!;
    let id = byPair.get(pair);
    if (id === undefined) {
      const key = groupKey(g.nodeTypeNames[g.nodeType[i]!] ?? `type ${g.nodeType[i]}`, g.strings[g.nodeName[i]!] ?? '');
      id = byKey.get(key);
      if (id === undefined) {
        id = groups.length;
        groups.push({ key, count: 0, size: 0 });
        byKey.set(key, id);
      }
      byPair.set(pair, id);
    }
    nodeGroup[i] = id;
    groups[id]!.count++;
    groups[id]!.size += g.selfSize[i]!;
  }
  return { groups, nodeGroup };
}

/** stringValues sums string nodes by value: the same label value or resourceVersion held a thousand times shows here. */
export function stringValues(g: HeapGraph): GroupStat[] {
  const t = g.nodeTypeNames.indexOf(STRING_TYPE);
  const count = new Uint32Array(g.strings.length);
  const size = new Float64Array(g.strings.length);
  for (let i = 0; i < g.nodeCount; i++) {
    if (g.nodeType[i] !== t) continue;
    count[g.nodeName[i]!]!++;
    size[g.nodeName[i]!]! += g.selfSize[i]!;
  }
  // The string table holds each value once, so an index is a value.
  const out: GroupStat[] = [];
  for (let s = 0; s < count.length; s++) if (count[s]! > 0) out.push({ key: g.strings[s]!, count: count[s]!, size: size[s]! });
  return out.sort(byLargest);
}
