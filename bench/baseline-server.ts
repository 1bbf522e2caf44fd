#!/usr/bin/env node
// The floor for the /mutate benchmark: Node's HTTPS server with the same certificate, reading and
// parsing the same JSON body, answering a fixed allowed AdmissionReview. No express, no decision.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { cert: { type: 'string' }, key: { type: 'string' }, port: { type: 'string', default: '0' } } });
const server = createServer({ cert: readFileSync(values.cert ?? ''), key: readFileSync(values.key ?? ''), minVersion: 'TLSv1.2' }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let uid: string;
    try {
      uid = (JSON.parse(Buffer.concat(chunks).toString()) as { request: { uid: string } }).request.uid;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"malformed"}');
      return;
    }
    const out = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true } });
    res.writeHead(200, { 'content-type': 'application/json' }).end(out);
  });
});
server.listen(Number(values.port), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: (server.address() as { port: number }).port }) + '\n');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
