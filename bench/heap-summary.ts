// Accounts for the memory of a process from V8 heap snapshots (.heapsnapshot files, as written by
// `node --heapsnapshot-signal=SIGUSR2` or v8.writeHeapSnapshot()): totals by node type, the largest
// groups of nodes by self size, the most repeated strings, the objects that retain the most, and with
// two snapshots the growth of each group from one to the other. The output is Markdown for docs/.
//
//   node dist/bench/heap-summary.js [--top N] [--no-retained] FILE
//   node dist/bench/heap-summary.js [--top N] [--no-retained] --base A --compare B
//
// Parsing: not JSON.parse of the whole file, which was tried first: simple, but on a loaded 2-core machine
// it took 16 s to read a 200 MB snapshot, most of it in the string table (see scanStrings), and built JS
// arrays of 8 bytes per number that then had to be copied. Instead the two big number arrays (nodes,
// edges: most of the file) are read by a byte scanner straight into Uint32Arrays, the string table string
// by string, and only the small rest (meta) by JSON.parse: 2 s for the same file. Not streaming either:
// the peak is about three times the file (600 MB RSS for 200 MB), within the default heap, and a
// streaming parser would cost far more code for the controller's 50–150 MB snapshots.

import { readFileSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

/** SnapshotMeta names the fields of a node and of an edge, and the names of their types. */
export interface SnapshotMeta {
  node_fields: string[];
  /** the first entry is the list of node type names; the others describe the remaining fields */
  node_types: unknown[];
  edge_fields: string[];
  /** the first entry is the list of edge type names */
  edge_types: unknown[];
}

/** RawSnapshot is the JSON of a .heapsnapshot file, as far as it is read here. */
export interface RawSnapshot {
  snapshot: { meta: SnapshotMeta };
  /** node_fields.length numbers per node */
  nodes: ArrayLike<number>;
  /** edge_fields.length numbers per edge; a node's edge_count edges follow those of the node before it */
  edges: ArrayLike<number>;
  strings: string[];
}

/** HeapGraph is a snapshot in typed arrays, indexed by node ordinal (position in nodes / node_fields.length) or edge ordinal. */
export interface HeapGraph {
  nodeCount: number;
  nodeTypeNames: string[];
  edgeTypeNames: string[];
  nodeType: Uint8Array;
  /** index into strings */
  nodeName: Uint32Array;
  nodeId: Uint32Array;
  selfSize: Float64Array;
  /** the edges of node n are firstEdge[n] up to, not including, firstEdge[n + 1] */
  firstEdge: Uint32Array;
  edgeType: Uint8Array;
  /** the ordinal of the node an edge points to */
  edgeTo: Uint32Array;
  strings: string[];
}

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

/** RetainedObject is one node that keeps much of the heap alive: what it is, its self size and what it retains. */
export interface RetainedObject {
  key: string;
  id: number;
  self: number;
  retained: number;
}

/** Summary is all that is printed of one snapshot; it is small, so the graph can be dropped once it is made. */
export interface Summary {
  totals: Totals;
  /** every group, largest self size first */
  groups: GroupStat[];
  /** every distinct string value, largest total size first */
  strings: GroupStat[];
  retained?: { top: RetainedObject[]; unreachable: number };
}

/** NO_NODE is the dominator of the root and of nodes that no strong path from the root reaches. */
export const NO_NODE = 0xffffffff;

/** NAME_WIDTH is how much of a name or string value is kept: enough to recognise a label value or a resourceVersion. */
export const NAME_WIDTH = 80;

/** STRING_TYPE is the node type whose name is the string's value; V8 names cons and sliced strings only by their type. */
const STRING_TYPE = 'string';
const STRING_TYPES = new Set([STRING_TYPE, 'concatenated string', 'sliced string']);

function fieldIndex(fields: string[], name: string, where: string): number {
  const i = fields.indexOf(name);
  if (i < 0) throw new Error(`heap snapshot: snapshot.meta.${where} has no "${name}" (${fields.join(',')})`);
  return i;
}

function typeNames(types: unknown[], where: string): string[] {
  const names = types[0];
  if (!Array.isArray(names) || !names.every((t) => typeof t === 'string')) throw new Error(`heap snapshot: snapshot.meta.${where}[0] is not a list of type names`);
  return names;
}

/** readSnapshot copies a parsed snapshot into typed arrays, reading field positions from its meta. */
export function readSnapshot(raw: RawSnapshot): HeapGraph {
  const meta = raw.snapshot.meta;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const [nType, nName, nId, nSize, nEdges] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((f) => fieldIndex(meta.node_fields, f, 'node_fields')) as [number, number, number, number, number];
  const [eType, eTo] = ['type', 'to_node'].map((f) => fieldIndex(meta.edge_fields, f, 'edge_fields')) as [number, number];
  const { nodes, edges } = raw;
  if (nodes.length % nf !== 0) throw new Error(`heap snapshot: ${nodes.length} node numbers is not a multiple of ${nf} fields`);
  const n = nodes.length / nf;
  const g: HeapGraph = {
    nodeCount: n,
    nodeTypeNames: typeNames(meta.node_types, 'node_types'),
    edgeTypeNames: typeNames(meta.edge_types, 'edge_types'),
    nodeType: new Uint8Array(n),
    nodeName: new Uint32Array(n),
    nodeId: new Uint32Array(n),
    selfSize: new Float64Array(n),
    firstEdge: new Uint32Array(n + 1),
    edgeType: new Uint8Array(edges.length / ef),
    edgeTo: new Uint32Array(edges.length / ef),
    strings: raw.strings,
  };
  let e = 0;
  for (let i = 0, p = 0; i < n; i++, p += nf) {
    g.nodeType[i] = nodes[p + nType]!;
    g.nodeName[i] = nodes[p + nName]!;
    g.nodeId[i] = nodes[p + nId]!;
    g.selfSize[i] = nodes[p + nSize]!;
    g.firstEdge[i] = e;
    e += nodes[p + nEdges]!;
  }
  g.firstEdge[n] = e;
  if (e * ef !== edges.length) throw new Error(`heap snapshot: nodes declare ${e} edges but edges holds ${edges.length / ef}`);
  for (let j = 0, q = 0; j < e; j++, q += ef) {
    const to = edges[q + eTo]!;
    if (to % nf !== 0 || to >= nodes.length) throw new Error(`heap snapshot: edge ${j} points to ${to}, not a node`);
    g.edgeType[j] = edges[q + eType]!;
    g.edgeTo[j] = to / nf;
  }
  return g;
}

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** arrayStart finds `"key": [` in JSON bytes and returns where the `[` is. */
function arrayStart(bytes: Buffer, key: string): number {
  // Inside a JSON string a quote is escaped, so `"key"` followed by a colon can only be an object key.
  for (let at = bytes.indexOf(`"${key}"`); at >= 0; at = bytes.indexOf(`"${key}"`, at + 1)) {
    let i = at + key.length + 2;
    while (isSpace(bytes[i])) i++;
    if (bytes[i++] !== 0x3a) continue;
    while (isSpace(bytes[i])) i++;
    if (bytes[i] === 0x5b) return i;
  }
  throw new Error(`heap snapshot: no "${key}" array`);
}

/**
 * scanStrings reads the JSON array of strings whose `[` is at open and says where its `]` is. Each string
 * is decoded on its own, and through JSON.parse only if it holds an escape. JSON.parse of a whole table
 * is slow on families of similar short strings (10 s for the 660k strings of a 200 MB snapshot, 13 s for
 * 600k strings "r1000000", "r1000001", …, likely collisions as V8 internalizes short strings while it
 * parses); decoded one by one they take well under a second.
 */
export function scanStrings(bytes: Buffer, open: number): { values: string[]; close: number } {
  const values: string[] = [];
  let i = open + 1;
  for (;;) {
    while (isSpace(bytes[i]) || bytes[i] === 0x2c) i++;
    if (bytes[i] === 0x5d) return { values, close: i };
    if (bytes[i] !== 0x22) throw new Error(`heap snapshot: expected a string at byte ${i}`);
    const start = ++i;
    let escaped = false;
    // Bytes of a multi-byte UTF-8 character are all ≥ 0x80, so a quote or backslash byte is one.
    for (let c = bytes[i]; c !== 0x22; c = bytes[i]) {
      if (c === undefined) throw new Error('heap snapshot: unterminated string');
      if (c === 0x5c) {
        escaped = true;
        i++;
      }
      i++;
    }
    values.push(escaped ? (JSON.parse(bytes.toString('utf8', start - 1, i + 1)) as string) : bytes.toString('utf8', start, i));
    i++;
  }
}

/** scanNumbers reads the comma-separated non-negative integers between from and to (exclusive) into a Uint32Array. */
export function scanNumbers(bytes: Buffer, from: number, to: number): Uint32Array {
  let count = 0;
  let inNumber = false;
  for (let i = from; i < to; i++) {
    const digit = bytes[i]! >= 0x30 && bytes[i]! <= 0x39;
    if (digit && !inNumber) count++;
    inNumber = digit;
  }
  const out = new Uint32Array(count);
  let k = 0;
  let value = -1;
  for (let i = from; i <= to; i++) {
    const c = i < to ? bytes[i]! : 0x2c;
    if (c >= 0x30 && c <= 0x39) {
      value = value < 0 ? c - 0x30 : value * 10 + c - 0x30;
    } else if (c === 0x2c || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      if (value >= 0) {
        if (value > 0xffffffff) throw new Error(`heap snapshot: number ${value} at byte ${i} does not fit 32 bits`);
        out[k++] = value;
        value = -1;
      }
    } else {
      throw new Error(`heap snapshot: unexpected ${JSON.stringify(String.fromCharCode(c))} at byte ${i} in a number array`);
    }
  }
  return out;
}

/** numberSpan finds the `[` and `]` of the number array under key; a number array holds no `]` in between. */
function numberSpan(bytes: Buffer, key: string): { open: number; close: number } {
  const open = arrayStart(bytes, key);
  const close = bytes.indexOf(0x5d, open);
  if (close < 0) throw new Error(`heap snapshot: "${key}" is not closed`);
  return { open, close };
}

/** parseSnapshot parses the bytes of a .heapsnapshot file (see the top of this file for how and why). */
export function parseSnapshot(bytes: Buffer): RawSnapshot {
  const nodes = numberSpan(bytes, 'nodes');
  const edges = numberSpan(bytes, 'edges');
  const stringsOpen = arrayStart(bytes, 'strings');
  const strings = scanStrings(bytes, stringsOpen);
  // What is left (meta and any small arrays) is parsed as JSON with the three big arrays emptied.
  const big = [nodes, edges, { open: stringsOpen, close: strings.close }].sort((x, y) => x.open - y.open);
  const parts: Buffer[] = [];
  let from = 0;
  for (const { open, close } of big) {
    parts.push(bytes.subarray(from, open + 1));
    from = close;
  }
  parts.push(bytes.subarray(from));
  const rest = JSON.parse(Buffer.concat(parts).toString('utf8')) as RawSnapshot;
  return { ...rest, nodes: scanNumbers(bytes, nodes.open + 1, nodes.close), edges: scanNumbers(bytes, edges.open + 1, edges.close), strings: strings.values };
}

/** loadSnapshot reads and parses a .heapsnapshot file into typed arrays. */
export function loadSnapshot(file: string): HeapGraph {
  return readSnapshot(parseSnapshot(readFileSync(file)));
}

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
function byLargest(a: GroupStat, b: GroupStat): number {
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

/** Dominators are each node's immediate dominator and retained size, by ordinal. */
export interface Dominators {
  /** the ordinal of the immediate dominator, or NO_NODE for the root and for nodes not reachable through strong edges */
  idom: Uint32Array;
  /** self size plus the self sizes of all nodes the node dominates; self size alone for unreachable nodes */
  retained: Float64Array;
  /** how many nodes the root reaches through strong edges, the root included */
  reachable: number;
}

/**
 * dominators computes the dominator tree from the root with Lengauer-Tarjan (the simple version: path
 * compression without balancing, O(E log N)), in typed arrays so that millions of nodes cost tens of MB
 * and no objects. Edges are followed as Chrome DevTools does (isEssentialEdge in HeapSnapshot.ts): weak
 * edges never, shortcut edges only from the root, where they mark the user's global objects.
 */
export function dominators(g: HeapGraph, root = 0): Dominators {
  const n = g.nodeCount;
  const weak = g.edgeTypeNames.indexOf('weak');
  const shortcut = g.edgeTypeNames.indexOf('shortcut');
  const { firstEdge, edgeTo, edgeType } = g;
  const strong = (from: number, e: number): boolean => edgeType[e] !== weak && (edgeType[e] !== shortcut || from === root);

  // Depth-first search numbering the reachable nodes 1..count in preorder; 0 means "none" below.
  const pre = new Uint32Array(n);
  const vertex = new Uint32Array(n + 1);
  const parent = new Uint32Array(n + 1);
  let count = 0;
  {
    const stack = new Uint32Array(n);
    const cursor = new Uint32Array(n);
    let sp = 0;
    pre[root] = ++count;
    vertex[count] = root;
    stack[sp] = root;
    cursor[sp++] = firstEdge[root]!;
    while (sp > 0) {
      const v = stack[sp - 1]!;
      const e = cursor[sp - 1]!;
      if (e === firstEdge[v + 1]) {
        sp--;
        continue;
      }
      cursor[sp - 1] = e + 1;
      const w = edgeTo[e]!;
      if (pre[w] !== 0 || !strong(v, e)) continue;
      pre[w] = ++count;
      vertex[count] = w;
      parent[count] = pre[v]!;
      stack[sp] = w;
      cursor[sp++] = firstEdge[w]!;
    }
  }

  // Predecessors of each reached node along strong edges, by preorder number, as one flat list.
  const predStart = new Uint32Array(count + 2);
  for (let i = 1; i <= count; i++) {
    const v = vertex[i]!;
    for (let e = firstEdge[v]!; e < firstEdge[v + 1]!; e++) if (strong(v, e)) predStart[pre[edgeTo[e]!]! + 1]!++;
  }
  for (let i = 1; i <= count + 1; i++) predStart[i]! += predStart[i - 1]!;
  const preds = new Uint32Array(predStart[count + 1]!);
  const fill = predStart.slice(0, count + 1);
  for (let i = 1; i <= count; i++) {
    const v = vertex[i]!;
    for (let e = firstEdge[v]!; e < firstEdge[v + 1]!; e++) if (strong(v, e)) preds[fill[pre[edgeTo[e]!]!]!++] = i;
  }

  const semi = new Uint32Array(count + 1);
  const idom = new Uint32Array(count + 1);
  const ancestor = new Uint32Array(count + 1);
  const label = new Uint32Array(count + 1);
  const bucketHead = new Uint32Array(count + 1);
  const bucketNext = new Uint32Array(count + 1);
  const path = new Uint32Array(count + 1);
  for (let i = 1; i <= count; i++) semi[i] = label[i] = i;

  // evaluate returns the node of smallest semidominator on the forest path above v (v itself at a tree's
  // root), compressing the path as it goes; a loop, not recursion, since paths can be a million long.
  const evaluate = (v: number): number => {
    if (ancestor[v] === 0) return v;
    let sp = 0;
    let x = v;
    while (ancestor[ancestor[x]!] !== 0) {
      path[sp++] = x;
      x = ancestor[x]!;
    }
    while (sp > 0) {
      x = path[--sp]!;
      const a = ancestor[x]!;
      if (semi[label[a]!]! < semi[label[x]!]!) label[x] = label[a]!;
      ancestor[x] = ancestor[a]!;
    }
    return label[v]!;
  };

  for (let w = count; w >= 2; w--) {
    for (let k = predStart[w]!; k < predStart[w + 1]!; k++) {
      const u = evaluate(preds[k]!);
      if (semi[u]! < semi[w]!) semi[w] = semi[u]!;
    }
    bucketNext[w] = bucketHead[semi[w]!]!;
    bucketHead[semi[w]!] = w;
    const p = parent[w]!;
    ancestor[w] = p;
    for (let v = bucketHead[p]!; v !== 0; v = bucketNext[v]!) {
      const u = evaluate(v);
      idom[v] = semi[u]! < semi[v]! ? u : p;
    }
    bucketHead[p] = 0;
  }
  for (let w = 2; w <= count; w++) if (idom[w] !== semi[w]) idom[w] = idom[idom[w]!]!;

  // A dominator precedes what it dominates in preorder, so one backward pass sums the retained sizes.
  const retainedPre = new Float64Array(count + 1);
  for (let i = 1; i <= count; i++) retainedPre[i] = g.selfSize[vertex[i]!]!;
  for (let w = count; w >= 2; w--) retainedPre[idom[w]!]! += retainedPre[w]!;

  const idomByNode = new Uint32Array(n).fill(NO_NODE);
  const retained = Float64Array.from(g.selfSize);
  for (let i = 1; i <= count; i++) {
    retained[vertex[i]!] = retainedPre[i]!;
    if (i > 1) idomByNode[vertex[i]!] = vertex[idom[i]!]!;
  }
  return { idom: idomByNode, retained, reachable: count };
}

/**
 * groupRetained sums the retained sizes of each group without counting twice: a node counts only when no
 * node above it in the dominator tree is of the same group (as the DevTools Summary view does).
 */
export function groupRetained(g: HeapGraph, grouping: Grouping, dom: Dominators, root = 0): Float64Array {
  const n = g.nodeCount;
  const out = new Float64Array(grouping.groups.length);
  // Children of each node in the dominator tree, as one flat list.
  const childStart = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) if (dom.idom[i] !== NO_NODE) childStart[dom.idom[i]! + 1]!++;
  for (let i = 1; i <= n; i++) childStart[i]! += childStart[i - 1]!;
  const children = new Uint32Array(childStart[n]!);
  const fill = childStart.slice(0, n);
  for (let i = 0; i < n; i++) if (dom.idom[i] !== NO_NODE) children[fill[dom.idom[i]!]!++] = i;

  const onPath = new Uint32Array(grouping.groups.length);
  const stack = new Uint32Array(dom.reachable);
  const cursor = new Uint32Array(dom.reachable);
  const enter = (v: number): void => {
    const gid = grouping.nodeGroup[v]!;
    if (onPath[gid]!++ === 0) out[gid]! += dom.retained[v]!;
  };
  let sp = 0;
  enter(root);
  stack[sp] = root;
  cursor[sp++] = childStart[root]!;
  while (sp > 0) {
    const v = stack[sp - 1]!;
    const c = cursor[sp - 1]!;
    if (c === childStart[v + 1]) {
      onPath[grouping.nodeGroup[v]!]!--;
      sp--;
      continue;
    }
    cursor[sp - 1] = c + 1;
    const w = children[c]!;
    enter(w);
    stack[sp] = w;
    cursor[sp++] = childStart[w]!;
  }
  // Nodes held only through weak edges retain nothing but themselves.
  for (let i = 0; i < n; i++) if (i !== root && dom.idom[i] === NO_NODE) out[grouping.nodeGroup[i]!]! += g.selfSize[i]!;
  return out;
}

/** topRetained lists the k nodes of largest retained size, leaving out synthetic nodes (the root and GC root categories). */
export function topRetained(g: HeapGraph, dom: Dominators, k: number): RetainedObject[] {
  const synthetic = g.nodeTypeNames.indexOf('synthetic');
  // A short sorted list beats sorting millions of ordinals for k of 15.
  const best: number[] = [];
  for (let i = 0; i < g.nodeCount; i++) {
    if (g.nodeType[i] === synthetic) continue;
    const r = dom.retained[i]!;
    if (best.length === k && r <= dom.retained[best[k - 1]!]!) continue;
    let at = best.length === k ? k - 1 : best.length;
    while (at > 0 && dom.retained[best[at - 1]!]! < r) {
      best[at] = best[at - 1]!;
      at--;
    }
    best[at] = i;
  }
  return best.map((i) => ({
    key: groupKey(g.nodeTypeNames[g.nodeType[i]!] ?? '', g.strings[g.nodeName[i]!] ?? ''),
    id: g.nodeId[i]!,
    self: g.selfSize[i]!,
    retained: dom.retained[i]!,
  }));
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

/** mb prints bytes as MB (2^20 bytes, as process.memoryUsage() figures are read elsewhere) with 2 decimals. */
export function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(2);
}

function signed(text: string): string {
  return /^-/.test(text) || /^0(\.0+)?$/.test(text) ? text : `+${text}`;
}

/** cell makes text safe inside a Markdown table cell. */
export function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/[\r\n]/g, ' ');
}

/** markdownTable renders a header and rows, the first textColumns columns aligned left and the numbers after them right. */
export function markdownTable(header: string[], rows: string[][], textColumns = 2): string {
  const align = header.map((_, i) => (i < textColumns ? '---' : '---:'));
  return [header, align, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

function code(text: string): string {
  return `\`${cell(text).replace(/`/g, "'")}\``;
}

function totalsTable(t: Totals): string {
  const rows = t.byType.map((s) => [code(s.key), String(s.count), mb(s.size)]);
  return markdownTable(['node type', 'count', 'self MB'], [['**all nodes**', String(t.count), mb(t.size)], ...rows], 1);
}

function stringsTable(strings: GroupStat[]): string {
  return markdownTable(['#', 'value', 'count', 'self MB'], strings.slice(0, 10).map((s, i) => [String(i + 1), code(JSON.stringify(truncate(s.key)).slice(1, -1)), String(s.count), mb(s.size)]));
}

function retainedTable(r: NonNullable<Summary['retained']>): string {
  const rows = r.top.map((o, i) => [String(i + 1), code(o.key), `@${o.id}`, mb(o.self), mb(o.retained)]);
  return `${markdownTable(['#', 'object', 'id', 'self MB', 'retained MB'], rows)}\n\n${r.unreachable} nodes are not reachable from the root through strong edges; each retains only itself.`;
}

/** renderSummary prints one snapshot: totals, the top groups, the top strings and, if computed, the top retainers. */
export function renderSummary(file: string, s: Summary, top: number): string {
  const withRetained = s.retained !== undefined;
  const groupRows = s.groups.slice(0, top).map((g, i) => [String(i + 1), code(g.key), String(g.count), mb(g.size), ...(withRetained ? [mb(g.retained ?? 0)] : [])]);
  const out = [
    `## Heap snapshot ${code(file)}`,
    '### Totals',
    totalsTable(s.totals),
    `### Top ${top} groups by self size`,
    markdownTable(['#', 'group', 'count', 'self MB', ...(withRetained ? ['retained MB'] : [])], groupRows),
    '### Top 10 strings by total size',
    stringsTable(s.strings),
  ];
  if (s.retained) out.push('### Top objects by retained size', retainedTable(s.retained));
  return out.join('\n\n');
}

function diffTable(first: string, rows: GroupDiff[], total?: GroupDiff): string {
  const line = (d: GroupDiff, i: string, name: string): string[] => [i, name, String(d.a.count), mb(d.a.size), String(d.b.count), mb(d.b.size), signed(String(d.count)), signed(mb(d.size))];
  const body = rows.map((d, i) => line(d, String(i + 1), code(d.key)));
  if (total) body.push(line(total, '', '**all nodes**'));
  return markdownTable(['#', first, 'count A', 'self MB A', 'count B', 'self MB B', 'count B−A', 'self MB B−A'], body);
}

/** renderComparison prints two snapshots: totals by type side by side, then groups and strings by growth from A to B. */
export function renderComparison(fileA: string, a: Summary, fileB: string, b: Summary, top: number): string {
  const asStat = (t: Totals): GroupStat => ({ key: 'all nodes', count: t.count, size: t.size });
  const total = diffGroups([asStat(a.totals)], [asStat(b.totals)])[0];
  // Groups that did not change at all would only pad the tables out to top rows.
  const changed = (d: GroupDiff): boolean => d.count !== 0 || d.size !== 0;
  const out = [
    `## Heap snapshots A ${code(fileA)} and B ${code(fileB)}`,
    '### Totals by node type',
    diffTable('node type', diffGroups(a.totals.byType, b.totals.byType), total),
    `### Top ${top} groups by growth in self size`,
    diffTable('group', diffGroups(a.groups, b.groups).filter(changed).slice(0, top), total),
    '### Top 10 strings by growth in total size',
    diffTable('value', diffGroups(a.strings, b.strings).filter(changed).slice(0, 10).map((d) => ({ ...d, key: JSON.stringify(truncate(d.key)).slice(1, -1) }))),
  ];
  if (a.retained && b.retained) {
    const retainedA = new Map(a.groups.map((g) => [g.key, g.retained ?? 0]));
    // The root and the GC root categories retain everything; their growth is the total, already shown above.
    const grown = b.groups
      .filter((g) => !g.key.startsWith('synthetic:'))
      .map((g) => ({ key: g.key, b: g.retained ?? 0, d: (g.retained ?? 0) - (retainedA.get(g.key) ?? 0) }))
      .sort((x, y) => y.d - x.d);
    const rows = grown.slice(0, top).map((g, i) => [String(i + 1), code(g.key), mb(g.b), signed(mb(g.d))]);
    out.push(`### Top ${top} groups by growth in retained size`, markdownTable(['#', 'group', 'retained MB B', 'retained MB B−A'], rows));
  }
  if (b.retained) out.push('### Top objects by retained size in B', retainedTable(b.retained));
  return out.join('\n\n');
}

/** reproduceLine is the last line of the output: the command that prints it again. */
export function reproduceLine(args: string[]): string {
  const quote = (a: string): string => (/^[\w./=:@%+-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`);
  return `reproduce: npm run heap:summary -- ${args.map(quote).join(' ')}`;
}

const USAGE = 'usage: node dist/bench/heap-summary.js [--top N] [--no-retained] FILE | [--top N] [--no-retained] --base A.heapsnapshot --compare B.heapsnapshot';

/** summarizeFile loads one snapshot and reduces it to a Summary, timing each step on stderr. */
function summarizeFile(file: string, withRetained: boolean): Summary {
  const t0 = performance.now();
  const g = loadSnapshot(file);
  const t1 = performance.now();
  const s = summarize(g, { withRetained });
  const t2 = performance.now();
  process.stderr.write(`${file}: ${g.nodeCount} nodes, ${g.edgeTo.length} edges; read ${((t1 - t0) / 1000).toFixed(1)} s, summarized ${((t2 - t1) / 1000).toFixed(1)} s\n`);
  return s;
}

/** main reads the arguments, summarizes each snapshot in turn and prints Markdown on stdout. */
function main(args: string[]): void {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    allowNegative: true,
    options: { top: { type: 'string', default: '25' }, base: { type: 'string' }, compare: { type: 'string' }, retained: { type: 'boolean', default: true } },
  });
  const top = Number(values.top);
  const compare = values.base !== undefined || values.compare !== undefined;
  if (!Number.isInteger(top) || top < 1 || (compare ? values.base === undefined || values.compare === undefined || positionals.length > 0 : positionals.length !== 1)) {
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  const text = compare
    ? renderComparison(values.base!, summarizeFile(values.base!, values.retained), values.compare!, summarizeFile(values.compare!, values.retained), top)
    : renderSummary(positionals[0]!, summarizeFile(positionals[0]!, values.retained), top);
  process.stdout.write(`${text}\n\n${reproduceLine(args)}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) main(process.argv.slice(2));
