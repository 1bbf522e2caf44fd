#!/usr/bin/env node
// CLI: npm run certs -- --out DIR [--service NAME] [--namespace NS] [--ip 127.0.0.1] [--days N]
// Writes ca.crt, tls.crt, tls.key into DIR (keys with mode 0600) and prints the base64 caBundle.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateCa, generateServing, serviceDnsNames } from './forge.js';

const usage = `Usage: npm run certs -- --out DIR [--service NAME] [--namespace NS] [--ip IP]... [--days N]

Generates a CA and a serving certificate for the webhook Service and prints the caBundle (base64 CA).
  --out DIR        where to write ca.crt, tls.crt, tls.key (created if missing)
  --service NAME   Service name (default phased-rollout-webhook)
  --namespace NS   Service namespace (default phased-rollout-system)
  --ip IP          an IP SAN, may repeat (e.g. 127.0.0.1 for a webhook reached by URL)
  --days N         serving certificate validity in days (default 365)
`;

function main(): number {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        out: { type: 'string' },
        service: { type: 'string', default: 'phased-rollout-webhook' },
        namespace: { type: 'string', default: 'phased-rollout-system' },
        ip: { type: 'string', multiple: true, default: [] },
        days: { type: 'string', default: '365' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${usage}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(usage);
    return 0;
  }
  const days = Number(values.days);
  if (!values.out || !Number.isInteger(days) || days < 1) {
    process.stderr.write(`--out is required and --days must be a positive integer\n\n${usage}`);
    return 2;
  }
  const ca = generateCa();
  const serving = generateServing(ca, { dnsNames: serviceDnsNames(values.service, values.namespace), ips: values.ip, days });
  mkdirSync(values.out, { recursive: true });
  writeFileSync(join(values.out, 'ca.crt'), ca.cert);
  writeFileSync(join(values.out, 'tls.crt'), serving.cert);
  writeFileSync(join(values.out, 'tls.key'), serving.key, { mode: 0o600 });
  process.stdout.write(Buffer.from(ca.cert).toString('base64') + '\n');
  return 0;
}

process.exitCode = main();
