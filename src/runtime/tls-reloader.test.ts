import forge from 'node-forge';
import { validatePair } from './tls-reloader.js';

/** selfSigned makes a certificate whose subject is empty and whose only name is a SAN, as cert-manager issues them. */
function sanOnly(): { cert: string; key: string } {
  const keys = forge.pki.rsa.generateKeyPair(2048);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  cert.setSubject([]);
  cert.setIssuer([{ name: 'commonName', value: 'issuer' }]);
  cert.setExtensions([{ name: 'subjectAltName', altNames: [{ type: 2, value: 'svc.ns.svc' }, { type: 7, ip: '127.0.0.1' }] }]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: forge.pki.privateKeyToPem(keys.privateKey) };
}

describe('validatePair', () => {
  it('accepts a certificate with an empty subject and names it by its SAN', () => {
    const { cert, key } = sanOnly();
    const pair = validatePair(Buffer.from(cert), Buffer.from(key));
    expect(pair.subject).toContain('DNS:svc.ns.svc');
    expect(pair.notAfter.getTime()).toBeGreaterThan(Date.now());
  });
});
