// A CA and a serving certificate for the webhook, built with node-forge: for the dev overlay, the
// end-to-end harness and the TLS tests. Production uses cert-manager instead (manifests/overlays/cert-manager).
import forge from 'node-forge';

const { pki, md } = forge;

/** Pem is a certificate and its key in PEM. */
export interface Pem {
  cert: string;
  key: string;
}

/** ServingOptions names what the serving certificate must be valid for. */
export interface ServingOptions {
  dnsNames: string[];
  ips: string[];
  /** Validity in days (default 365). */
  days?: number;
  /** Override of the start of validity (tests use it to make expired certificates). */
  notBefore?: Date;
}

function serial(): string {
  // Positive, random, 16 bytes: RFC 5280 wants unique serials; a leading 0 bit keeps it positive.
  const bytes = forge.random.getBytesSync(16);
  return '0' + forge.util.bytesToHex(bytes).slice(1);
}

function validity(cert: forge.pki.Certificate, days: number, notBefore?: Date): void {
  const start = notBefore ?? new Date(Date.now() - 5 * 60_000); // tolerate a little clock skew
  cert.validity.notBefore = start;
  cert.validity.notAfter = new Date(start.getTime() + days * 86_400_000);
}

/** generateCa makes a self-signed CA certificate (RSA 2048, SHA-256). */
export function generateCa(commonName = 'phased-rollout-ca', days = 3650): Pem {
  const keys = pki.rsa.generateKeyPair(2048);
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  validity(cert, days);
  const subject = [{ name: 'commonName', value: commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, md.sha256.create());
  return { cert: pki.certificateToPem(cert), key: pki.privateKeyToPem(keys.privateKey) };
}

/** generateServing makes a serving certificate signed by `ca`, valid for the given names and IPs. */
export function generateServing(ca: Pem, o: ServingOptions): Pem {
  if (o.dnsNames.length === 0 && o.ips.length === 0) throw new Error('a serving certificate needs at least one DNS name or IP');
  const caCert = pki.certificateFromPem(ca.cert);
  const caKey = pki.privateKeyFromPem(ca.key);
  const keys = pki.rsa.generateKeyPair(2048);
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  validity(cert, o.days ?? 365, o.notBefore);
  cert.setSubject([{ name: 'commonName', value: o.dnsNames[0] ?? o.ips[0] ?? 'phased-rollout' }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    // Clients (the API server included) match only the SAN, never the CN.
    { name: 'subjectAltName', altNames: [...o.dnsNames.map((value) => ({ type: 2, value })), ...o.ips.map((ip) => ({ type: 7, ip }))] },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, md.sha256.create());
  return { cert: pki.certificateToPem(cert), key: pki.privateKeyToPem(keys.privateKey) };
}

/** serviceDnsNames lists the names a webhook Service is reached by. */
export function serviceDnsNames(service: string, namespace: string): string[] {
  return [service, `${service}.${namespace}`, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`];
}
