// The Markdown report: one snapshot's tables, or two snapshots side by side with their growth from A to B.
import { truncate, type GroupStat, type Totals } from './groups.js';
import { diffGroups, type GroupDiff, type Summary } from './summary.js';

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
