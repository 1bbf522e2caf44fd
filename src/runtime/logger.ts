// Structured JSON logs on stdout through pino; one logger per process, children carry request ids.
// The process is named in `process`, leaving `name` free for the object a line is about.
import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/** createLogger makes the process logger; `destination` is injectable so tests can capture lines. */
export function createLogger(name: string, level: string, destination?: pino.DestinationStream): Logger {
  const opts: pino.LoggerOptions = {
    level,
    base: { process: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    // Defence in depth: nothing that looks like a credential is ever written, whoever logs it.
    redact: { paths: ['*.token', '*.password', '*.authorization', '*.headers.authorization', 'tls.key'], censor: '[redacted]' },
  };
  return destination ? pino(opts, destination) : pino(opts);
}
