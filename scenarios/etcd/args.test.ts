import { describe, expect, it } from '@jest/globals';
import { readArgs } from './args.js';

describe('the scenario command line', () => {
  it.each([
    [['upgrade'], { name: 'upgrade', system: 'ours', rate: 20, keep: false, quiet: false }],
    [['zones', '--system', 'grafana', '--rate', '50', '--keep', '--quiet'], { name: 'zones', system: 'grafana', rate: 50, keep: true, quiet: true }],
    [['bad-release', '--system=plain', '--e2e-dir', '/tmp/x'], { name: 'bad-release', system: 'plain', rate: 20, keep: false, quiet: false, e2eDir: '/tmp/x' }],
    [['bad-release', '--system', 'kruise'], { name: 'bad-release', system: 'kruise', rate: 20, keep: false, quiet: false }],
    [['damaged-release'], { name: 'damaged-release', system: 'ours', rate: 20, keep: false, quiet: false }],
    [['damaged-release', '--system', 'ours-no-checkpoint'], { name: 'damaged-release', system: 'ours-no-checkpoint', rate: 20, keep: false, quiet: false }],
    [['damaged-release', '--system', 'plain', '--quiet'], { name: 'damaged-release', system: 'plain', rate: 20, keep: false, quiet: true }],
  ])('%j is read', (argv, want) => expect(readArgs(argv)).toEqual(want));

  it.each([
    [[], 'one scenario'],
    [['upgrade', 'zones'], 'one scenario'],
    [['rollout'], 'one scenario, one of upgrade, bad-release, zones, controller-kill, demo, damaged-release; got ["rollout"]'],
    [['upgrade', '--system', 'argo'], 'upgrade runs with --system ours or plain or grafana or kruise; got "argo"'],
    [['controller-kill', '--system', 'grafana'], 'controller-kill runs with --system ours or plain'],
    // No zones in Kruise Rollouts: the zones scenario is not its.
    [['zones', '--system', 'kruise'], 'zones runs with --system ours or plain or grafana; got "kruise"'],
    [['demo', '--system', 'plain'], 'demo runs with --system ours'],
    // No peer takes a checkpoint: damaged-release compares ours with and without one, and plain.
    [['damaged-release', '--system', 'grafana'], 'damaged-release runs with --system ours or ours-no-checkpoint or plain; got "grafana"'],
    [['damaged-release', '--system', 'kruise'], 'damaged-release runs with --system ours or ours-no-checkpoint or plain'],
    // Without a checkpoint policy in its layout, ours-no-checkpoint would be ours: only damaged-release has it.
    [['upgrade', '--system', 'ours-no-checkpoint'], 'upgrade runs with --system ours or plain or grafana or kruise; got "ours-no-checkpoint"'],
    [['bad-release', '--system', 'ours-no-checkpoint'], 'bad-release runs with'],
    [['upgrade', '--rate', '0'], '--rate is writes per second, an integer 1..500; got "0"'],
    [['upgrade', '--rate', '501'], 'got "501"'],
    [['upgrade', '--rate', '2e1'], 'got "2e1"'],
    [['upgrade', '--rate', '-5'], '--rate'],
    [['upgrade', '--rate', ''], 'got ""'],
    [['upgrade', '--rate', '9'.repeat(10_000)], '--rate is writes per second'],
    [['upgrade', '--sytem', 'plain'], "Unknown option '--sytem'"],
    [['upgrade', '--keep=yes'], "--keep"],
  ])('%j is refused: %s', (argv, why) => {
    const r = readArgs(argv);
    expect('error' in r && r.error).toContain(why);
  });
});
