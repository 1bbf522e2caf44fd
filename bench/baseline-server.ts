#!/usr/bin/env node
// The baselines of the /mutate benchmark, with the same certificate, answering a fixed allowed
// AdmissionReview with no decision:
//  - bare (default): Node's HTTPS server reading and parsing the JSON body itself: the floor;
//  - --express: a minimal express 5 app as one would write it (express.json() with the webhook's body
//    limit, res.json): what an express webhook costs before it decides anything.
import { readFileSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { createServer } from 'node:https';
import { parseArgs } from 'node:util';
// express is imported only for --express: the bare baseline is also Node.js's memory floor in bench:mutate.
import type express from 'express';

const { values } = parseArgs({ options: { cert: { type: 'string' }, key: { type: 'string' }, port: { type: 'string', default: '0' }, express: { type: 'boolean', default: false } } });

/** minimalExpress is the express baseline: parse with express.json(), answer with res.json(). */
async function minimalExpress(): Promise<RequestListener> {
  const express = (await import('express')).default;
  const app = express();
  app.post('/mutate', express.json({ limit: '32mb' }), (req, res) => {
    res.json({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: (req.body as { request?: { uid?: string } })?.request?.uid, allowed: true } });
  });
  app.use((err: Error & { status?: number }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(err.status ?? 500).json({ error: 'malformed' });
  });
  return app as unknown as RequestListener;
}

const bare: RequestListener = (req, res) => {
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
};

const server = createServer({ cert: readFileSync(values.cert ?? ''), key: readFileSync(values.key ?? ''), minVersion: 'TLSv1.2' }, values.express ? await minimalExpress() : bare);
server.listen(Number(values.port), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: (server.address() as { port: number }).port }) + '\n');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
