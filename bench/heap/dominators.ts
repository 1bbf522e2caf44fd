// Retained sizes: the dominator tree of a snapshot's graph (Lengauer-Tarjan over strong edges), the
// retained size of each group counted once, and the nodes that retain the most.
import type { HeapGraph } from './graph.js';
import { groupKey, type Grouping } from './groups.js';

/** RetainedObject is one node that keeps much of the heap alive: what it is, its self size and what it retains. */
export interface RetainedObject {
  key: string;
  id: number;
  self: number;
  retained: number;
}

/** NO_NODE is the dominator of the root and of nodes that no strong path from the root reaches. */
export const NO_NODE = 0xffffffff;

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
