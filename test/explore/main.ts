// npm run explore -- [--runs N] [--seed S] [--time SECONDS] [--steps N] [--ignore kind,kind] [--world classic|extended] [--without kind,kind]
// The exploration of test/explore/ for longer than the suite's budget. Prints the seed, the runs and
// the time; a failing sequence shrunk to a minimal one, as a row to paste into the replayed sequences
// of test/integration/explore.test.ts, with the trace of what happened. Exit 1 when something is found.
// --ignore counts the named kinds of finding as passing, and --without leaves kinds of event out (a
// step's `do`): only for measuring how long the search takes to reach one defect on a tree with others.
import { explore, report } from './explore.js';

function main(argv: string[]): number {
  const opt = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i] ?? '';
    if (!/^--(runs|seed|time|steps|ignore|world|without)$/.test(k) || argv[i + 1] === undefined) {
      console.error(`usage: npm run explore -- [--runs N] [--seed S] [--time SECONDS] [--steps N] [--ignore kind,kind] [--world classic|extended] [--without kind,kind] (got ${k})`);
      return 2;
    }
    opt.set(k.slice(2), argv[i + 1]!);
  }
  const seed = opt.has('seed') ? Number(opt.get('seed')) : Math.floor(Math.random() * 2 ** 31);
  const runs = opt.has('runs') ? Number(opt.get('runs')) : opt.has('time') ? undefined : 1000;
  const ignore = new Set((opt.get('ignore') ?? '').split(',').filter((x) => x !== ''));
  if (ignore.size > 0) console.log(`measuring: findings of kind ${[...ignore].join(', ')} count as passing`);
  const e = explore({ seed, ...(runs ? { runs } : {}), ...(opt.has('time') ? { timeLimitMs: Number(opt.get('time')) * 1000 } : {}), ...(opt.has('steps') ? { maxSteps: Number(opt.get('steps')) } : {}), ignore, extended: opt.get('world') === 'extended', without: new Set((opt.get('without') ?? '').split(',').filter((x) => x !== '')) });
  console.log(report(e));
  return e.failure ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
