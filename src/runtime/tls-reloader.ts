// Serving certificates that change on disk without a restart: cert-manager renews a Secret and the
// kubelet swaps the mounted `..data` symlink atomically; a hand copy may write the cert before the key.
// We watch the directories (a watch on the file itself is lost when the symlink target is replaced),
// poll as a fallback (inotify is not available on every volume type), and only ever switch to a pair
// whose key matches its certificate — a broken pair is logged and the last good one kept.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from './logger.js';

/** TlsPair is a PEM certificate chain and its private key, as read from disk. */
export interface TlsPair {
  cert: Buffer;
  key: Buffer;
  /** When the leaf certificate expires. */
  notAfter: Date;
  subject: string;
}

/** validatePair parses the leaf certificate and checks that the key belongs to it; throws with the reason. */
export function validatePair(cert: Buffer, key: Buffer): TlsPair {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (e) {
    throw new Error(`certificate does not parse: ${(e as Error).message}`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (e) {
    throw new Error(`private key does not parse: ${(e as Error).message}`);
  }
  if (!x509.checkPrivateKey(privateKey)) throw new Error('private key does not match the certificate');
  // cert-manager issues serving certificates with an empty subject (names only in the SAN), for which
  // Node reports `subject` as undefined: name the pair by its SAN then.
  const subject = x509.subject ? x509.subject.replace(/\n/g, ', ') : (x509.subjectAltName ?? '(no subject)');
  return { cert, key, notAfter: new Date(x509.validTo), subject };
}

/** readPair reads and validates the pair at these paths. */
export async function readPair(certFile: string, keyFile: string): Promise<TlsPair> {
  const [cert, key] = await Promise.all([readFile(certFile), readFile(keyFile)]);
  return validatePair(cert, key);
}

/** TlsReloaderOptions wires the reloader to files, a logger and the server it feeds. */
export interface TlsReloaderOptions {
  certFile: string;
  keyFile: string;
  log: Logger;
  /** Called with each new good pair (not with the initial one). */
  apply: (pair: TlsPair) => void;
  /** Called after each reload attempt that found changed files. */
  report?: (result: 'success' | 'failure', pair?: TlsPair) => void;
  pollIntervalMs?: number;
  debounceMs?: number;
}

/** TlsReloader keeps the served pair in step with the files; `check()` can be called directly. */
export class TlsReloader {
  private current: TlsPair | undefined;
  private watchers: FSWatcher[] = [];
  private poll: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private refused: Buffer | undefined;

  constructor(private readonly opts: TlsReloaderOptions) {}

  /** load reads the initial pair; start-up fails loudly if it is broken (there is no last good pair). */
  async load(): Promise<TlsPair> {
    this.current = await readPair(this.opts.certFile, this.opts.keyFile);
    this.opts.report?.('success', this.current);
    return this.current;
  }

  /** start watches the files' directories and polls as a fallback. */
  start(): void {
    const dirs = new Set([dirname(this.opts.certFile), dirname(this.opts.keyFile)]);
    for (const dir of dirs) {
      try {
        const w = watch(dir, () => this.schedule());
        w.on('error', (err) => this.opts.log.warn({ err, dir }, 'certificate directory watch failed; polling only'));
        this.watchers.push(w);
      } catch (err) {
        this.opts.log.warn({ err, dir }, 'cannot watch certificate directory; polling only');
      }
    }
    this.poll = setInterval(() => void this.check(), this.opts.pollIntervalMs ?? 10_000);
    this.poll.unref();
  }

  /** stop ends watching and polling. */
  stop(): void {
    for (const w of this.watchers) w.close();
    this.watchers = [];
    clearInterval(this.poll);
    clearTimeout(this.debounce);
  }

  private schedule(): void {
    // A symlink swap or a two-file copy fires several events; settle before reading.
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.check(), this.opts.debounceMs ?? 200);
    this.debounce.unref();
  }

  /** check reloads when the files differ from the served pair; concurrent calls share one read. */
  check(): Promise<void> {
    this.checking ??= this.doCheck().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async doCheck(): Promise<void> {
    let cert: Buffer, key: Buffer;
    try {
      [cert, key] = await Promise.all([readFile(this.opts.certFile), readFile(this.opts.keyFile)]);
    } catch (err) {
      this.opts.log.warn({ err, certFile: this.opts.certFile, keyFile: this.opts.keyFile }, 'cannot read certificate files; keeping the current pair');
      return;
    }
    if (this.current && cert.equals(this.current.cert) && key.equals(this.current.key)) return;
    // The poll would otherwise repeat the same refusal every interval until someone fixes the files.
    const both = Buffer.concat([cert, Buffer.from('\0'), key]);
    if (this.refused?.equals(both)) return;
    try {
      const pair = validatePair(cert, key);
      this.current = pair;
      this.opts.apply(pair);
      this.opts.report?.('success', pair);
      this.opts.log.info({ subject: pair.subject, notAfter: pair.notAfter.toISOString() }, 'serving certificate reloaded');
    } catch (err) {
      this.refused = both;
      this.opts.report?.('failure');
      this.opts.log.error({ reason: (err as Error).message, certFile: this.opts.certFile }, 'new serving certificate refused; keeping the last good pair');
    }
  }
}
