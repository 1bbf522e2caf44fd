// The layout of a V8 heap snapshot (.heapsnapshot): its JSON as far as it is read here (RawSnapshot),
// and the same nodes and edges copied into typed arrays indexed by ordinal (HeapGraph), with field
// positions read from the snapshot's meta rather than assumed.

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
