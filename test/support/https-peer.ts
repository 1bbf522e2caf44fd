// Opens a fresh TLS connection (no keep-alive reuse) and reports the server certificate's serial.
import { connect } from 'node:tls';

/** peerSerial connects to 127.0.0.1:port trusting `ca` and resolves the served certificate's serial. */
export function peerSerial(port: number, ca: string | string[], opts: { maxVersion?: 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'; minVersion?: 'TLSv1' | 'TLSv1.1' } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, ca, ...opts }, () => {
      const serial = s.getPeerCertificate().serialNumber;
      s.end();
      resolve(serial.toLowerCase());
    });
    s.once('error', reject);
  });
}
