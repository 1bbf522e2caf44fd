// Every YAML file the project ships or installs from (the chart's CRDs, the kustomize manifests, the
// examples) parses: a quote left single in a CRD's description once broke every install, and only the
// end-to-end suite, half an hour in, would have said so. Helm templates are not YAML until rendered
// (hack/render-manifests.sh renders them into manifests/base, which is read here).
import { loadAllYaml } from '@kubernetes/client-node';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const under = (dir: string) =>
  readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => join(dir, f));
const files = [...under('charts/phased-rollout/crds'), ...under('manifests'), ...under('examples'), 'charts/phased-rollout/values.yaml', 'charts/phased-rollout/Chart.yaml'];

describe('the YAML files shipped', () => {
  it('there are some', () => expect(files.length).toBeGreaterThan(5));
  it.each(files)('%s parses', (f) => {
    expect(() => loadAllYaml(readFileSync(join(ROOT, f), 'utf8'))).not.toThrow();
  });
});
