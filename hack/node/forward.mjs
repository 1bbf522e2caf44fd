// Relays TCP from the real node's bridge address to the same port on 127.0.0.1, for the harness's
// loopback-only services a pod must reach (the API server, Prometheus, the gate exporter):
//   node forward.mjs LISTEN_ADDRESS TARGET_ADDRESS PORT...
// A plain byte pipe: TLS (the API server's) passes through untouched.
import net from 'node:net';

const [listen, target, ...ports] = process.argv.slice(2);
if (!listen || !target || ports.length === 0) {
  console.error('usage: forward.mjs LISTEN_ADDRESS TARGET_ADDRESS PORT...');
  process.exit(2);
}
for (const port of ports.map(Number)) {
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: target, port });
    client.pipe(upstream).pipe(client);
    const close = () => { client.destroy(); upstream.destroy(); };
    client.on('error', close);
    upstream.on('error', close);
  });
  server.on('error', (err) => { console.error(`forward ${listen}:${port}: ${err.message}`); process.exit(1); });
  server.listen(port, listen, () => console.log(`forwarding ${listen}:${port} -> ${target}:${port}`));
}
process.on('SIGTERM', () => process.exit(0));
