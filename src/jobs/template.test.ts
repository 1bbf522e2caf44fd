import { parseJobGate } from './template.js';

const template = { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox', command: ['true'] }] } } } };

describe('parseJobGate', () => {
  it.each([
    [{ template }, { runs: 'step', timeoutSeconds: 600 }],
    [{ template, runs: 'check', timeoutSeconds: 30 }, { runs: 'check', timeoutSeconds: 30 }],
  ])('accepts %j', (item, want) => {
    expect(parseJobGate('job.x', item, 'spec.jobs[0]')).toMatchObject({ name: 'job.x', ...want });
  });
  it.each([
    [{ template, runs: 'always' }, 'spec.jobs[0].runs: step (once per step, the default) or check'],
    [{ template, timeoutSeconds: 0 }, 'spec.jobs[0].timeoutSeconds: an integer from 1 to 86400'],
    [{ template, timeoutSeconds: 1.5 }, 'timeoutSeconds'],
    [{}, 'spec.jobs[0].template: a Job template with a spec'],
    [{ template: { spec: { template: { spec: { containers: [] } } } } }, 'containers: at least one container'],
    [{ template: { spec: { template: { spec: { containers: [{}], restartPolicy: 'Always' } } } } }, 'restartPolicy: Never (the default) or OnFailure'],
    [{ template: { spec: { template: { spec: { containers: [{ name: 'c', args: ['x'.repeat(20_000)] }] } } } } }, 'at most 16384 bytes'],
    [{ template: { metadata: { labels: { 'phased-rollout.io/checked': 'true' } }, ...template } }, 'template.metadata.labels: phased-rollout.io/checked is the controller\'s to set'],
    [{ template: { metadata: { annotations: { note: 3 } }, ...template } }, 'template.metadata.annotations: a map of strings'],
    [{ template: { spec: { ...template.spec, ttlSecondsAfterFinished: 0 } } }, 'ttlSecondsAfterFinished: an integer of at least 60'],
    [{ template: { spec: { ...template.spec, suspend: true } } }, 'spec.suspend: not set'],
    [{ template: { spec: { ...template.spec, managedBy: 'x' } } }, 'spec.managedBy: not set'],
    [{ template: { spec: { ...template.spec, manualSelector: true } } }, 'spec.selector: not set'],
    [{ template: { spec: { template: { spec: { containers: [{ name: 'c', env: { A: 'b' } }] } } } } }, 'containers[0]: a container whose env is a list'],
  ])('refuses %#', (item, problem) => {
    const r = parseJobGate('job.x', item, 'spec.jobs[0]');
    expect(typeof r).toBe('string');
    expect(r).toContain(problem);
  });
});
