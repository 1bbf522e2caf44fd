// Serving pairs on disk laid out like a kubelet-projected Secret volume: tls.crt -> ..data/tls.crt,
// ..data -> ..<timestamp>/, and an atomic swap of ..data on update.
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCa, generateServing, type Pem } from '../../certs/forge.js';

/** serialOf returns a PEM certificate's serial in lower-case hex. */
export function serialOf(pem: string): string {
  return new X509Certificate(pem).serialNumber.toLowerCase();
}

/** ProjectedVolume writes pairs the way the kubelet updates a mounted Secret. */
export class ProjectedVolume {
  readonly dir = mkdtempSync(join(tmpdir(), 'pr-tls-'));
  private n = 0;
  readonly certFile = join(this.dir, 'tls.crt');
  readonly keyFile = join(this.dir, 'tls.key');

  constructor(first: Pem) {
    this.write(first.cert, first.key);
    symlinkSync('..data/tls.crt', this.certFile);
    symlinkSync('..data/tls.key', this.keyFile);
  }

  /** write publishes a cert and key with one atomic rename of ..data. */
  write(cert: string, key: string): void {
    const ts = join(this.dir, `..${Date.now()}_${this.n++}`);
    mkdirSync(ts);
    writeFileSync(join(ts, 'tls.crt'), cert);
    writeFileSync(join(ts, 'tls.key'), key);
    const tmp = join(this.dir, '..data_tmp');
    symlinkSync(ts.slice(this.dir.length + 1), tmp);
    renameSync(tmp, join(this.dir, '..data'));
  }
}

/** loopbackPair makes a CA and a serving pair for 127.0.0.1. */
export function loopbackPair(ca: Pem = generateCa()): { ca: Pem; serving: Pem } {
  return { ca, serving: generateServing(ca, { dnsNames: ['localhost'], ips: ['127.0.0.1'] }) };
}
