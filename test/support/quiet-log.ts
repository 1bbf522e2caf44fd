// A logger that writes nowhere, or into an array a test can read.
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/runtime/logger.js';

/** quietLog returns a logger whose JSON lines are collected in `lines`. */
export function quietLog(level = 'debug'): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { log: createLogger('test', level, sink), lines };
}
