#!/usr/bin/env node
// The end-to-end gate: a loopback exporter whose series `e2e_gate{name="..."}` tests set with
// `PUT /gates/<name>` (body `1`, `0`, `NaN` or `absent` to drop the series); `PUT /gates/<name>?namespace=<ns>`
// sets `e2e_gate{name="...",namespace="<ns>"}` instead, a series of one tenant (prom-label-proxy's tests). Prometheus scrapes
// /metrics every second; `GET /log` returns every change with its time, so a test can line up the
// controller's partition steps with what the gate said.
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' } } });
const gates = new Map<string, string>();
const log: { at: string; name: string; value: string }[] = [];
const MAX_LOG = 10_000;
const NAME = /^[A-Za-z0-9_.-]{1,200}$/;

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  if (req.method === 'GET' && url.pathname === '/metrics') {
    const lines = ['# HELP e2e_gate Gate value set by the end-to-end tests.', '# TYPE e2e_gate gauge'];
    for (const [key, v] of gates) {
      const [name, ns] = key.split('\n');
      lines.push(`e2e_gate{name="${name}"${ns ? `,namespace="${ns}"` : ''}} ${v}`);
    }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(lines.join('\n') + '\n');
    return;
  }
  if (req.method === 'GET' && url.pathname === '/log') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(log));
    return;
  }
  if (req.method === 'GET' && url.pathname === '/gates') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Object.fromEntries(gates)));
    return;
  }
  const m = /^\/gates\/(.+)$/.exec(url.pathname);
  if (req.method === 'PUT' && m && NAME.test(m[1] ?? '')) {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
      if (body.length > 100) req.destroy();
    });
    req.on('end', () => {
      const ns = url.searchParams.get('namespace');
      if (ns !== null && !NAME.test(ns)) {
        res.writeHead(400).end('bad namespace\n');
        return;
      }
      const name = ns ? `${m[1] ?? ''}\n${ns}` : (m[1] ?? '');
      const v = body.trim();
      if (v === 'absent') gates.delete(name);
      else if (v === 'NaN' || /^-?\d+(\.\d+)?$/.test(v)) gates.set(name, v);
      else {
        res.writeHead(400).end('body must be a number, NaN or absent\n');
        return;
      }
      log.push({ at: new Date().toISOString(), name, value: v });
      if (log.length > MAX_LOG) log.shift();
      res.writeHead(204).end();
    });
    return;
  }
  res.writeHead(404).end('not found\n');
});

server.listen(Number(values.port), values.host, () => {
  const addr = server.address();
  process.stdout.write(JSON.stringify({ msg: 'gate exporter listening', port: typeof addr === 'object' && addr ? addr.port : 0 }) + '\n');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
