#!/usr/bin/env node
// The demo application's metric: a loopback exporter serving `demo_error_ratio{app="web"}`, the
// share of failed requests the demo's "web" StatefulSet would report. Prometheus scrapes it every
// second; the demo turns it bad for the bad release with `PUT /ratio` (a number in the body).
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, ratio: { type: 'string', default: '0.01' } } });
let ratio = Number(values.ratio);

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/metrics') {
    const body = `# HELP demo_error_ratio Share of failed requests of the demo app.\n# TYPE demo_error_ratio gauge\ndemo_error_ratio{app="web"} ${ratio}\n`;
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(body);
    return;
  }
  if (req.method === 'PUT' && req.url === '/ratio') {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
      if (body.length > 32) req.destroy();
    });
    req.on('end', () => {
      const v = Number(body.trim());
      if (body.trim() === '' || !Number.isFinite(v) || v < 0 || v > 1) return void res.writeHead(400).end('a number from 0 to 1\n');
      ratio = v;
      res.writeHead(204).end();
    });
    return;
  }
  res.writeHead(404).end();
});
server.listen(Number(values.port), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
