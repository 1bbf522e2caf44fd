// Where a rollout's checks go: the Prometheus URL and the HTTP gates' URLs, each held to the controller's
// allow-lists, and credentials sent only where the operator named. Pure: the planner gets the check to
// run, or why the configuration cannot be used (phase Invalid).
import { KEYS, type RolloutConfig } from '../annotations.js';
import { credentialsAllowed, notAllowedMessage, urlAllowed } from '../prometheus/allowed.js';
import { renderUrl } from '../gate-templates.js';
import { podContext } from './gates.js';
import type { CheckRequest, PlanInput } from './types.js';

/** checkEndpoints builds the check request of a configuration, or says why it is Invalid. */
export function checkEndpoints(cfg: RolloutConfig, input: PlanInput, revision: string): { check: CheckRequest } | { invalid: string } {
  const { sts } = input;
  // A platform policy's Prometheus gates go to the operator's Prometheus (src/policies/merge.ts); only
  // the others need the StatefulSet's URL and may carry its Secret.
  const operator = new Set(cfg.operatorGates ?? []);
  // The platform's unscoped queries (spec.tenantScoped: false) go to its own Prometheus, never the StatefulSet's.
  const unscoped = new Set(cfg.unscopedGates ?? []);
  const platformUrl = input.platformPrometheusUrl ?? input.defaultPrometheusUrl;
  if (unscoped.size > 0 && input.tenantLabel && !input.platformPrometheusUrl) return { invalid: `gates ${[...unscoped].join(', ')} of a ClusterRolloutGate with tenantScoped: false go without the tenant, which the Prometheus of --prometheus-url behind prom-label-proxy refuses: set the controller's --platform-prometheus-url` };
  if (unscoped.size > 0 && !platformUrl) return { invalid: `gates ${[...unscoped].join(', ')} of a ClusterRolloutGate with tenantScoped: false go only to the controller's --platform-prometheus-url or --prometheus-url, and it has neither` };
  for (const g of unscoped) operator.add(g);
  const queries = cfg.gates.filter((g) => !operator.has(g.name)).length + cfg.compareGates.filter((g) => !operator.has(g.name)).length;
  // An Argo analysis's metrics go to the address their template names (when allowed), else here too.
  const analyses = (cfg.analysisGates ?? []).filter((g) => !operator.has(g.name)).length;
  const prometheusUrl = queries > 0 || analyses > 0 ? (cfg.prometheusUrl ?? input.defaultPrometheusUrl) : undefined;
  if (queries > 0 && !prometheusUrl) return { invalid: 'no Prometheus URL: set phased-rollout.io/prometheus-url or the controller flag --prometheus-url' };
  const allowedUrls = input.allowedPrometheusUrls ?? [];
  if (prometheusUrl && !urlAllowed(prometheusUrl, allowedUrls)) return { invalid: `Prometheus URL ${prometheusUrl} is not allowed: use ${notAllowedMessage(allowedUrls)}` };
  // Credentials fail closed: never to a URL the operator did not name (src/prometheus/allowed.ts).
  if (prometheusUrl && cfg.prometheusSecret && !credentialsAllowed(prometheusUrl, allowedUrls, input.defaultPrometheusUrl)) {
    return { invalid: `${KEYS.prometheusSecret} is sent only to the controller's own --prometheus-url or a URL under its --allowed-prometheus-urls (Helm value allowedPrometheusUrls); ${prometheusUrl} is neither` };
  }
  // HTTP gates: placeholders stand only after the host (checked at admission), so the URL as written
  // decides where the request goes; it is checked against --allowed-gate-urls once rendered.
  const allowedGates = input.allowedGateUrls ?? [];
  const here = podContext(sts, sts.partition, revision);
  const gateUrls = cfg.httpGates.map((g) => ({ gate: g, url: renderUrl(g.url, here) }));
  const refused = gateUrls.find((u) => !urlAllowed(u.url, allowedGates))?.gate;
  if (refused) return { invalid: `HTTP gate ${refused.name} URL ${refused.url} is not allowed: use a URL under one of the controller's --allowed-gate-urls: ${allowedGates.join(', ')}` };
  // HTTP hooks go only where HTTP gates may (the same list): a hook POSTs what it acts on.
  const hookRefused = cfg.hooks.find((h) => h.url !== undefined && !urlAllowed(h.url, allowedGates));
  if (hookRefused) return { invalid: `hook ${hookRefused.name} URL ${hookRefused.url} is not allowed: use a URL under one of the controller's --allowed-gate-urls: ${allowedGates.join(', ')}` };
  const unlisted = cfg.httpSecret ? gateUrls.find((u) => !credentialsAllowed(u.url, allowedGates))?.gate : undefined;
  if (unlisted) return { invalid: `${KEYS.httpSecret} is sent only to URLs under the controller's --allowed-gate-urls (Helm value allowedGateUrls); HTTP gate ${unlisted.name} URL ${unlisted.url} is not under one` };
  return {
    check: {
      gates: cfg.gates,
      ...(prometheusUrl ? { prometheusUrl } : {}),
      ...(operator.size > 0 && input.defaultPrometheusUrl ? { operatorPrometheusUrl: input.defaultPrometheusUrl, operatorGates: [...operator] } : {}),
      ...(unscoped.size > 0 ? { unscopedGates: [...unscoped], platformPrometheusUrl: platformUrl } : {}),
      ...(cfg.prometheusSecret ? { secretName: cfg.prometheusSecret } : {}),
      ...(cfg.httpGates.length > 0 ? { http: cfg.httpGates } : {}),
      ...(cfg.httpSecret ? { httpSecretName: cfg.httpSecret } : {}),
      ...(cfg.dryRun.length > 0 ? { dryRun: cfg.dryRun } : {}),
      ...((prometheusUrl || operator.size > 0 || analyses > 0) && input.tenantLabel ? { tenant: { label: input.tenantLabel, value: sts.namespace } } : {}),
    },
  };
}
