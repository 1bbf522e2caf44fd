// Prints the chaos suites' rows (JSON lines of {scenario, tried, survived, ok}) as a Markdown table:
// what was tried against the system and what survived it. Used by hack/e2e-test.sh.
import { readFileSync } from 'node:fs';

const rows = readFileSync(process.argv[2], 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const cell = (s) => String(s).replace(/\|/g, '\\|');
console.log('\nChaos: what was tried and what survived');
console.log('| scenario | tried | survived | ok |');
console.log('|---|---|---|---|');
for (const r of rows) console.log(`| ${cell(r.scenario)} | ${cell(r.tried)} | ${cell(r.survived)} | ${r.ok ? 'yes' : 'NO'} |`);
