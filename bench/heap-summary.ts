// Accounts for the memory of a process from V8 heap snapshots (.heapsnapshot files, as written by
// `node --heapsnapshot-signal=SIGUSR2` or v8.writeHeapSnapshot()): totals by node type, the largest
// groups of nodes by self size, the most repeated strings, the objects that retain the most, and with
// two snapshots the growth of each group from one to the other. The output is Markdown for docs/.
//
//   node dist/bench/heap-summary.js [--top N] [--no-retained] FILE
//   node dist/bench/heap-summary.js [--top N] [--no-retained] --base A --compare B
//
// The work is in bench/heap/: parse.ts reads a file (and says why it does not JSON.parse it), graph.ts
// lays it out in typed arrays, groups.ts and dominators.ts compute the sizes, summary.ts keeps what is
// printed, render.ts prints it.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { loadSnapshot } from './heap/parse.js';
import { renderComparison, renderSummary } from './heap/render.js';
import { summarize, type Summary } from './heap/summary.js';

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
