// What the scenarios' command lines share: one positional (the scenario), --system, --rate (writes a
// second, digits only), --keep, --quiet and --e2e-dir, read with node:util's parseArgs.
import { parseArgs } from 'node:util';

export interface CommonArgs {
  positionals: string[];
  system: string;
  rate: number;
  keep: boolean;
  quiet: boolean;
  e2eDir?: string;
}

/** readCommon reads the shared options; the reason when they cannot be read (rate checked: 1..500). */
export function readCommon(argv: string[]): CommonArgs | { error: string } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { system: { type: 'string', default: 'ours' }, rate: { type: 'string', default: '20' }, keep: { type: 'boolean', default: false }, 'e2e-dir': { type: 'string' }, quiet: { type: 'boolean', default: false } },
    });
  } catch (e) {
    return { error: (e as Error).message };
  }
  const { values, positionals } = parsed;
  // Digits only: "20" is twenty writes a second, "2e1", "0x14" and "20/s" are refused rather than guessed.
  const rate = /^\d{1,3}$/.test(values.rate) ? Number(values.rate) : NaN;
  if (!(rate >= 1 && rate <= 500)) return { error: `--rate is writes per second, an integer 1..500; got ${JSON.stringify(values.rate)}` };
  return { positionals, system: values.system, rate, keep: values.keep, quiet: values.quiet, ...(values['e2e-dir'] ? { e2eDir: values['e2e-dir'] } : {}) };
}
