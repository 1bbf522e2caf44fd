// The start of every entry point: flags and env into a frozen config (exit 2 listing every problem),
// `--help` (exit 0), the JSON logger, and a fatal log line for anything uncaught.
import { ConfigError, helpText, loadConfig, type Schema, type Values } from './config.js';
import { createLogger, type Logger } from './logger.js';

/** bootProcess returns the config and logger, or undefined after printing --help. Exits 2 on bad flags. */
export function bootProcess<S extends Schema & { 'log-level': { kind: 'level' } }>(program: string, summary: string, schema: S): { c: Values<S>; log: Logger } | undefined {
  let parsed;
  try {
    parsed = loadConfig(schema, process.argv.slice(2), process.env);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`${program}: invalid configuration:\n  ${e.problems.join('\n  ')}\n`);
    process.exit(2);
  }
  if (parsed.help) {
    process.stdout.write(helpText(program, summary, schema));
    return undefined;
  }
  const c = parsed.values;
  const log = createLogger(program, String(c['log-level']));
  process.on('uncaughtException', (err) => {
    log.fatal({ err }, 'uncaught exception');
    process.exit(1);
  });
  return { c, log };
}
