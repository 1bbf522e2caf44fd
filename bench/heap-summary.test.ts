import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import { NO_NODE, dominators, groupRetained, topRetained } from './heap/dominators.js';
import { readSnapshot, type RawSnapshot } from './heap/graph.js';
import { groupNodes, stringValues, totals } from './heap/groups.js';
import { loadSnapshot, parseSnapshot, scanNumbers } from './heap/parse.js';
import { cell, mb, renderComparison, renderSummary } from './heap/render.js';
import { diffGroups, summarize } from './heap/summary.js';
import { reproduceLine } from './heap-summary.js';

const NODE_TYPES = ['hidden', 'array', 'string', 'object', 'code', 'closure', 'regexp', 'number', 'native', 'synthetic', 'concatenated string', 'sliced string', 'symbol', 'bigint', 'object shape'];
const EDGE_TYPES = ['context', 'element', 'property', 'internal', 'hidden', 'shortcut', 'weak'];
const V8_NODE_FIELDS = ['type', 'name', 'id', 'self_size', 'edge_count', 'trace_node_id', 'detachedness'];
const V8_EDGE_FIELDS = ['type', 'name_or_index', 'to_node'];

interface HandNode {
  type: string;
  name: string;
  size: number;
  /** [edge type, ordinal of the target] */
  edges?: [string, number][];
}

/** snapshotOf lays out nodes as V8 does (or in the field order given), ids 1, 3, 5, … */
function snapshotOf(nodes: HandNode[], nodeFields = V8_NODE_FIELDS, edgeFields = V8_EDGE_FIELDS): RawSnapshot {
  const strings: string[] = [];
  const str = (s: string): number => (strings.includes(s) ? strings.indexOf(s) : strings.push(s) - 1);
  const flatNodes: number[] = [];
  const flatEdges: number[] = [];
  nodes.forEach((n, i) => {
    const v: Record<string, number> = { type: NODE_TYPES.indexOf(n.type), name: str(n.name), id: i * 2 + 1, self_size: n.size, edge_count: n.edges?.length ?? 0, trace_node_id: 0, detachedness: 0 };
    flatNodes.push(...nodeFields.map((f) => v[f]!));
    for (const [type, to] of n.edges ?? []) {
      const e: Record<string, number> = { type: EDGE_TYPES.indexOf(type), name_or_index: str('edge'), to_node: to * nodeFields.length };
      flatEdges.push(...edgeFields.map((f) => e[f]!));
    }
  });
  const meta = { node_fields: nodeFields, node_types: [NODE_TYPES, 'string', 'number'], edge_fields: edgeFields, edge_types: [EDGE_TYPES, 'string_or_number', 'node'] };
  return { snapshot: { meta }, nodes: flatNodes, edges: flatEdges, strings };
}

// Two Foos share a Bar; the second holds a Baz only weakly and reaches a string through a shortcut,
// which counts only from the root.
const HAND: HandNode[] = [
  /* 0 */ { type: 'synthetic', name: '', size: 0, edges: [['element', 1], ['element', 2]] },
  /* 1 */ { type: 'object', name: 'Foo', size: 10, edges: [['property', 3], ['property', 5], ['internal', 7], ['internal', 8]] },
  /* 2 */ { type: 'object', name: 'Foo', size: 20, edges: [['property', 3], ['weak', 6], ['shortcut', 5]] },
  /* 3 */ { type: 'object', name: 'Bar', size: 5, edges: [['internal', 4]] },
  /* 4 */ { type: 'string', name: 'hello', size: 3 },
  /* 5 */ { type: 'string', name: 'hello', size: 3 },
  /* 6 */ { type: 'object', name: 'Baz', size: 100 },
  /* 7 */ { type: 'closure', name: 'run', size: 7 },
  /* 8 */ { type: 'concatenated string', name: '(concatenated string)', size: 4 },
];

describe('readSnapshot', () => {
  it('reads field positions from meta, in any order', () => {
    const v8Order = readSnapshot(snapshotOf(HAND));
    const other = readSnapshot(snapshotOf(HAND, ['name', 'edge_count', 'self_size', 'id', 'type'], ['to_node', 'type', 'name_or_index']));
    expect(other).toEqual(v8Order);
    expect(v8Order.nodeCount).toBe(9);
    expect([...v8Order.firstEdge]).toEqual([0, 2, 6, 9, 10, 10, 10, 10, 10, 10]);
    expect([...v8Order.edgeTo.subarray(0, 3)]).toEqual([1, 2, 3]);
  });

  it.each([
    ['a missing node field', (r: RawSnapshot) => (r.snapshot.meta.node_fields = ['type', 'name', 'id', 'edge_count']), /node_fields has no "self_size"/],
    ['edges that do not add up', (r: RawSnapshot) => (r.edges = [...Array.from(r.edges), 1, 0, 0]), /declare 10 edges but edges holds 11/],
    ['an edge into the middle of a node', (r: RawSnapshot) => (r.edges = Array.from(r.edges, (x, i) => (i === 2 ? 1 : x))), /edge 0 points to 1, not a node/],
  ])('rejects %s', (_what, spoil, message) => {
    const raw = snapshotOf(HAND);
    spoil(raw);
    expect(() => readSnapshot(raw)).toThrow(message);
  });
});

describe('parseSnapshot', () => {
  it('reads the file form, whitespace and escapes included, as JSON.parse would', () => {
    const raw = snapshotOf([
      { type: 'synthetic', name: '', size: 0, edges: [['element', 1], ['element', 2]] },
      { type: 'string', name: 'say "hi"\n\\ é ✓ ]', size: 32 },
      { type: 'string', name: '"nodes":[1,2]', size: 24 },
    ]);
    for (const text of [JSON.stringify(raw), JSON.stringify(raw, null, 1)]) {
      const parsed = parseSnapshot(Buffer.from(text));
      expect(readSnapshot(parsed)).toEqual(readSnapshot(JSON.parse(text) as RawSnapshot));
      expect(parsed.strings).toEqual(raw.strings);
    }
  });

  it('accepts only non-negative integers in the number arrays', () => {
    const scan = (text: string): number[] => [...scanNumbers(Buffer.from(text), 1, text.length - 1)];
    expect(scan('[1,22,\n333 ,4294967295]')).toEqual([1, 22, 333, 4294967295]);
    expect(scan('[]')).toEqual([]);
    expect(() => scan('[1,-2]')).toThrow(/unexpected "-" at byte 3/);
    expect(() => scan('[4294967296]')).toThrow(/does not fit 32 bits/);
  });
});

describe('grouping', () => {
  const g = readSnapshot(snapshotOf(HAND));

  it('totals all nodes and each node type', () => {
    expect(totals(g)).toEqual({
      count: 9,
      size: 152,
      byType: [
        { key: 'object', count: 4, size: 135 },
        { key: 'closure', count: 1, size: 7 },
        { key: 'string', count: 2, size: 6 },
        { key: 'concatenated string', count: 1, size: 4 },
        { key: 'synthetic', count: 1, size: 0 },
      ],
    });
  });

  it('groups objects by constructor, others by type and name, and strings by type alone', () => {
    const { groups, nodeGroup } = groupNodes(g);
    expect(groups.map((s) => [s.key, s.count, s.size])).toEqual([
      ['synthetic:', 1, 0],
      ['object:Foo', 2, 30],
      ['object:Bar', 1, 5],
      ['string', 2, 6],
      ['object:Baz', 1, 100],
      ['closure:run', 1, 7],
      ['concatenated string', 1, 4],
    ]);
    expect([...nodeGroup]).toEqual([0, 1, 1, 2, 3, 3, 4, 5, 6]);
  });

  it('counts string values apart, largest total first', () => {
    expect(stringValues(g)).toEqual([{ key: 'hello', count: 2, size: 6 }]);
  });

  it('keeps a long name to 80 characters on one line', () => {
    const long = readSnapshot(snapshotOf([{ type: 'closure', name: `${'a'.repeat(79)}\nbc`, size: 1 }]));
    expect(groupNodes(long).groups[0]!.key).toBe(`closure:${'a'.repeat(79)} …`);
  });
});

describe('dominators', () => {
  it('follow strong edges only, and shortcuts only from the root', () => {
    const g = readSnapshot(snapshotOf(HAND));
    const dom = dominators(g);
    expect([...dom.idom]).toEqual([NO_NODE, 0, 0, 0, 3, 1, NO_NODE, 1, 1]);
    expect([...dom.retained]).toEqual([52, 24, 20, 8, 3, 3, 100, 7, 4]);
    expect(dom.reachable).toBe(8);
  });

  it('give each group its retained size once, not again for a member below another', () => {
    const g = readSnapshot(snapshotOf(HAND));
    const grouping = groupNodes(g);
    expect([...groupRetained(g, grouping, dominators(g))]).toEqual([52, 44, 8, 6, 100, 7, 4]);
  });

  it('list the largest retainers, leaving out synthetic nodes', () => {
    const g = readSnapshot(snapshotOf(HAND));
    expect(topRetained(g, dominators(g), 3)).toEqual([
      { key: 'object:Baz', id: 13, self: 100, retained: 100 },
      { key: 'object:Foo', id: 3, self: 10, retained: 24 },
      { key: 'object:Foo', id: 5, self: 20, retained: 20 },
    ]);
  });

  it('match the example of Lengauer and Tarjan (1979), where semidominators differ from dominators', () => {
    const names = 'RABCDEFGHIJKL';
    const arcs = 'RA RB RC AD BA BD BE CF CG DL EH FI GI GJ HE HK IK JI KI KR LH'.split(' ');
    const nodes = [...names].map((name) => ({ type: 'object', name, size: 1, edges: arcs.filter((a) => a[0] === name).map((a): [string, number] => ['element', names.indexOf(a[1]!)]) }));
    const g = readSnapshot(snapshotOf(nodes));
    const idom = dominators(g).idom;
    const want = { A: 'R', B: 'R', C: 'R', D: 'R', E: 'R', F: 'C', G: 'C', H: 'R', I: 'R', J: 'G', K: 'R', L: 'D' };
    expect(Object.fromEntries([...names.slice(1)].map((n) => [n, names[idom[names.indexOf(n)]!]]))).toEqual(want);
  });

  it('agree with the definition (removing the dominator cuts the node off) on random graphs', () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const n = 2 + random(11);
      const nodes: HandNode[] = Array.from({ length: n }, (_, i) => ({ type: 'object', name: `N${i}`, size: 1 + random(50), edges: [] }));
      for (let k = random(3 * n); k > 0; k--) nodes[random(n)]!.edges!.push([['element', 'property', 'weak', 'shortcut'][random(4)]!, random(n)]);
      const g = readSnapshot(snapshotOf(nodes));
      const reached = (without: number): boolean[] => {
        const seen = nodes.map(() => false);
        const todo = without === 0 ? [] : [0];
        if (without !== 0) seen[0] = true;
        while (todo.length > 0) {
          const v = todo.pop()!;
          for (const [type, w] of nodes[v]!.edges!) {
            if (w === without || seen[w] || type === 'weak' || (type === 'shortcut' && v !== 0)) continue;
            seen[w] = true;
            todo.push(w);
          }
        }
        return seen;
      };
      const all = reached(-1);
      // doms[v] is every node whose removal cuts v off, v itself included.
      const doms = nodes.map((_, v) => (all[v] ? nodes.map((_, d) => d).filter((d) => d === v || !reached(d)[v]) : []));
      const want = nodes.map((_, v) => {
        if (v === 0 || !all[v]) return NO_NODE;
        const strict = doms[v]!.filter((d) => d !== v);
        return strict.reduce((best, d) => (doms[d]!.length > doms[best]!.length ? d : best));
      });
      const wantRetained = nodes.map((_, v) => (all[v] ? nodes.reduce((sum, w, i) => (doms[i]!.includes(v) ? sum + w.size : sum), 0) : nodes[v]!.size));
      const dom = dominators(g);
      expect([...dom.idom]).toEqual(want);
      expect([...dom.retained]).toEqual(wantRetained);
    }
  });
});

describe('diffGroups', () => {
  it('pairs groups by key, counts an absent one as zero and puts the largest growth first', () => {
    const a = [{ key: 'a', count: 1, size: 10 }, { key: 'b', count: 2, size: 5 }];
    const b = [{ key: 'a', count: 3, size: 40 }, { key: 'c', count: 1, size: 7 }];
    expect(diffGroups(a, b).map((d) => [d.key, d.a.count, d.b.count, d.count, d.size])).toEqual([
      ['a', 1, 3, 2, 30],
      ['c', 0, 1, 1, 7],
      ['b', 2, 0, -2, -5],
    ]);
  });
});

describe('rendering', () => {
  it('prints MB of 2^20 bytes, safe table cells and a line to run it again', () => {
    expect(mb(1.5 * 1024 * 1024)).toBe('1.50');
    expect(mb(4999)).toBe('0.00');
    expect(cell('a|b\nc')).toBe('a\\|b c');
    expect(reproduceLine(['--top', '5', 'my file.heapsnapshot'])).toBe("reproduce: npm run heap:summary -- --top 5 'my file.heapsnapshot'");
  });

  it('prints one snapshot and a comparison as Markdown tables', () => {
    const scale = (n: HandNode): HandNode => ({ ...n, size: n.size * 1024 * 1024 });
    const a = summarize(readSnapshot(snapshotOf(HAND.slice(0, 1).map((n) => ({ ...n, edges: [] })))));
    const b = summarize(readSnapshot(snapshotOf(HAND.map(scale))));
    const one = renderSummary('b.heapsnapshot', b, 2);
    expect(one).toContain('| **all nodes** | 9 | 152.00 |');
    expect(one).toContain('| 1 | `object:Baz` | 1 | 100.00 | 100.00 |\n| 2 | `object:Foo` | 2 | 30.00 | 44.00 |\n\n');
    expect(one).toContain('| 1 | `hello` | 2 | 6.00 |');
    expect(one).toContain('| 2 | `object:Foo` | @3 | 10.00 | 24.00 |');
    const two = renderComparison('a.heapsnapshot', a, 'b.heapsnapshot', b, 1);
    expect(two).toContain('| 1 | `object:Baz` | 0 | 0.00 | 1 | 100.00 | +1 | +100.00 |\n|  | **all nodes** | 1 | 0.00 | 9 | 152.00 | +8 | +152.00 |');
    expect(two).toContain('| 1 | `object:Baz` | 100.00 | +100.00 |');
    const same = renderComparison('b.heapsnapshot', b, 'b.heapsnapshot', b, 5);
    expect(same).toContain('### Top 5 groups by growth in self size\n\n| # | group | count A | self MB A | count B | self MB B | count B−A | self MB B−A |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n|  | **all nodes** |');
  });
});

/** HeapSummaryProbe is allocated 10,000 times so that a real snapshot of this process must show it. */
class HeapSummaryProbe {
  // Eight more in-object fields make each instance ~110 bytes: ~1 MB in all, well inside the top 25
  // groups of a test process's heap (at ~50 bytes it ranked 16th, too near the edge).
  readonly w0 = 0;
  readonly w1 = 1;
  readonly w2 = 2;
  readonly w3 = 3;
  readonly w4 = 4;
  readonly w5 = 5;
  readonly w6 = 6;
  readonly w7 = 7;

  constructor(
    readonly index: number,
    readonly label = `probe-${index % 100}`,
    readonly payload = [index, index + 1, index + 2],
  ) {}
}

describe('a real snapshot', () => {
  it('shows 10,000 instances of a class among the top groups', () => {
    const probes = Array.from({ length: 10_000 }, (_, i) => new HeapSummaryProbe(i));
    const dir = mkdtempSync(join(tmpdir(), 'heap-summary-'));
    try {
      const summary = summarize(loadSnapshot(v8.writeHeapSnapshot(join(dir, 'probe.heapsnapshot'))));
      const probeGroup = summary.groups.slice(0, 25).find((s) => s.key === 'object:HeapSummaryProbe');
      expect(probeGroup?.count).toBeGreaterThanOrEqual(10_000);
      expect(summary.retained?.top.length).toBe(15);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(probes).toHaveLength(10_000);
  }, 120_000);
});
