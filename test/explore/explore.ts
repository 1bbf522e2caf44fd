// The seeded exploration: fast-check draws a setup and a sequence of events, runSequence() judges it,
// and a failing sequence is shrunk to a minimal one and printed as a table test to paste.
import fc from 'fast-check';
import { runSequence, type RunResult } from './run.js';
import { extendedSetupArb, setupArb, stepsArb, type Setup, type Step } from './steps.js';

/** ExploreOptions bound one exploration: by runs, by time (ms, shrinking included), or both. */
export interface ExploreOptions {
  seed: number;
  runs?: number;
  timeLimitMs?: number;
  /** The longest sequence drawn. */
  maxSteps?: number;
  /** Kinds of finding to count as passing: for measuring how long the search takes to reach another one. Never set it in the suite. */
  ignore?: ReadonlySet<string>;
  /** The extended world (steps.ts extendedEvents): member hooks, policy caches, slow checks, re-creation. */
  extended?: boolean;
  /** Kinds of event (a step's `do`) left out of every sequence: for measuring one defect's reach alone. */
  without?: ReadonlySet<string>;
}

/** Failure is the minimal failing sequence of an exploration. */
export interface Failure {
  setup: Setup;
  steps: Step[];
  kind: string;
  result: RunResult;
  /** The run that failed first (1-based), when, and how long its sequence was before shrinking. */
  foundAtRun: number;
  foundAfterMs: number;
  foundLength: number;
  shrinks: number;
}

/** Exploration is what one exploration did. */
export interface Exploration {
  seed: number;
  runs: number;
  ms: number;
  interrupted: boolean;
  failure?: Failure;
}

/** kindOf names the kind of a finding, after the rule that found it. */
export function kindOf(finding: string): string {
  if (/no longer held: the replicas changed/.test(finding)) return 'promotion-after-scale';
  if (/no longer held: a pause was set/.test(finding)) return 'promotion-after-pause';
  if (/carried over a change of replicas/.test(finding)) return 'hold-after-scale';
  if (/no longer held/.test(finding)) return 'promotion-ended';
  if (/not an inconclusive hold of this step/.test(finding)) return 'promotion-not-of-hold';
  if (/without a passing final check/.test(finding)) return 'final-check-skipped';
  if (/no partition step of the controller released/.test(finding)) return 'unverified-pod';
  if (/lowered twice/.test(finding)) return 'lowered-twice';
  if (/was not passing|ms after the last pod became available/.test(finding)) return 'ungated-step';
  if (/busy loop/.test(finding)) return 'busy-loop';
  if (/never counted/.test(finding)) return 'check-never-counted';
  if (/without its prepare hook/.test(finding)) return 'unprepared-pod';
  if (/without a checkpoint/.test(finding)) return 'uncheckpointed-pod';
  return 'other';
}

/** explore runs random sequences until one fails, the runs are done, or the time is up. */
export function explore(o: ExploreOptions): Exploration {
  const started = performance.now();
  let runs = 0;
  let first: Omit<Failure, 'setup' | 'steps' | 'kind' | 'result' | 'shrinks'> | undefined;
  const kept = (r: RunResult) => r.findings.filter((f) => !o.ignore?.has(kindOf(f)));
  const drawn = stepsArb(o.maxSteps ?? 30, o.extended);
  const stepsOf = o.without?.size ? drawn.map((steps) => steps.filter((s) => !o.without!.has(s.do))) : drawn;
  const property = fc.property(o.extended ? extendedSetupArb : setupArb, stepsOf, (setup, steps) => {
    if (!first) runs++;
    const bad = kept(runSequence(setup, steps)).length > 0;
    if (bad && !first) first = { foundAtRun: runs, foundAfterMs: performance.now() - started, foundLength: steps.length };
    return !bad;
  });
  const d = fc.check(property, { seed: o.seed, numRuns: o.runs ?? 1_000_000_000, ...(o.timeLimitMs ? { interruptAfterTimeLimit: o.timeLimitMs, markInterruptAsFailure: false } : {}) });
  const out: Exploration = { seed: o.seed, runs, ms: performance.now() - started, interrupted: d.interrupted };
  if (d.failed && d.counterexample && first) {
    const [setup, steps] = d.counterexample;
    const result = runSequence(setup, steps);
    out.failure = { setup, steps, kind: kindOf(kept(result)[0] ?? ''), result, shrinks: d.numShrinks, ...first };
  }
  return out;
}

/** literal writes a value as TypeScript source (single-quoted strings, unquoted keys). */
export function literal(v: unknown): string {
  if (typeof v === 'string') return `'${v.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
  if (Array.isArray(v)) return `[${v.map(literal).join(', ')}]`;
  if (v && typeof v === 'object') return `{ ${Object.entries(v).map(([k, x]) => `${/^[A-Za-z_]\w*$/.test(k) ? k : literal(k)}: ${literal(x)}`).join(', ')} }`;
  return String(v);
}

/** replayTest prints a failure as a table test for test/integration/explore.test.ts, with the seed and what it found. */
export function replayTest(e: Exploration, f: Failure): string {
  const found = f.result.findings.map((x) => `  //   ${x}`).join('\n');
  return [
    `  // Found by \`npm run explore -- --seed ${e.seed}\` at run ${f.foundAtRun} (${(f.foundAfterMs / 1000).toFixed(1)} s, ${f.foundLength} events), shrunk to ${f.steps.length} events in ${f.shrinks} shrinks:`,
    found,
    `  ['${f.kind}', ${literal(f.setup)}, [`,
    ...f.steps.map((s) => `    ${literal(s)},`),
    '  ]],',
  ].join('\n');
}

/** report is the text of an exploration's outcome: the figures, and a failure's replay test and trace. */
export function report(e: Exploration): string {
  const head = `exploration seed ${e.seed}: ${e.runs} runs in ${(e.ms / 1000).toFixed(1)} s${e.interrupted ? ' (time limit)' : ''}`;
  if (!e.failure) return `${head}; nothing found`;
  const f = e.failure;
  return [`${head}; FOUND ${f.kind}`, 'Replay (a row of the replayed sequences in test/integration/explore.test.ts):', replayTest(e, f), 'Trace of the minimal sequence:', ...f.result.trace.map((l) => `  ${l}`)].join('\n');
}
