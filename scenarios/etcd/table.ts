// The results table of docs/etcd.md from RESULT and DETAIL lines: one row per scenario and system, each
// run's figures side by side (runs differ; a median hides a lost write). Pure; table-main.ts runs the
// scenarios and prints it.

/** Run is one scenario run's RESULT and DETAIL fields. */
export type Run = Record<string, string>;

/** fieldsOf reads `key=value` pairs of a RESULT or DETAIL line. */
export function fieldsOf(line: string): Run {
  return Object.fromEntries([...line.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1] ?? '', m[2] ?? '']));
}

const COLUMNS: [string, string][] = [
  ['acked', 'acked'],
  ['lost', 'lost'],
  ['failed', 'failed'],
  ['unavailable_s', 'unavailable s'],
  ['p99_ms', 'p99 ms'],
  ['members_on_new', 'on new'],
  ['max_down', 'most down at once'],
];

/** table renders runs (in order) as markdown: each cell lists the runs' values, separated by " / ". */
export function table(runs: readonly Run[]): string[] {
  const keys: string[] = [];
  const by = new Map<string, Run[]>();
  for (const r of runs) {
    const k = `${r.scenario} | ${r.system}`;
    if (!by.has(k)) keys.push(k);
    by.set(k, [...(by.get(k) ?? []), r]);
  }
  const head = `| scenario | system | runs | ${COLUMNS.map(([, h]) => h).join(' | ')} |`;
  const rule = `|${' --- |'.repeat(COLUMNS.length + 3)}`;
  return [head, rule, ...keys.map((k) => {
    const rs = by.get(k) ?? [];
    return `| ${k} | ${rs.length} | ${COLUMNS.map(([c]) => rs.map((r) => r[c] ?? '-').join(' / ')).join(' | ')} |`;
  })];
}
