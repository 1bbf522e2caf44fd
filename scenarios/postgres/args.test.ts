import { readArgs } from './args.js';

describe('readArgs', () => {
  it.each([
    [['upgrade'], { name: 'upgrade', system: 'ours', rate: 20, keep: false, quiet: false }],
    [['bad-release', '--system', 'plain', '--rate', '50', '--keep'], { name: 'bad-release', system: 'plain', rate: 50, keep: true }],
    [['upgrade', '--system', 'ours-no-hooks', '--quiet'], { system: 'ours-no-hooks', quiet: true }],
    [['bad-migration'], { name: 'bad-migration', system: 'ours' }],
    [['bad-migration', '--system', 'ours-no-checkpoint'], { name: 'bad-migration', system: 'ours-no-checkpoint' }],
    [['bad-migration', '--system', 'plain'], { name: 'bad-migration', system: 'plain' }],
  ])('%j', (argv, want) => expect(readArgs(argv)).toMatchObject(want));
  it.each([
    [[], /^one scenario/],
    [['zones'], /^one scenario/],
    [['upgrade', '--system', 'grafana'], /^--system is one of ours, ours-no-hooks, plain/],
    // A hook is Patroni's, a checkpoint the single member's: each scenario compares its own.
    [['upgrade', '--system', 'ours-no-checkpoint'], /^--system is one of ours, ours-no-hooks, plain for upgrade; got "ours-no-checkpoint"/],
    [['bad-migration', '--system', 'ours-no-hooks'], /^--system is one of ours, ours-no-checkpoint, plain for bad-migration/],
    [['upgrade', '--rate', '2e1'], /^--rate is writes per second/],
    [['upgrade', '--rate', '0'], /^--rate is writes per second/],
    [['upgrade', '--bogus'], /bogus/],
  ])('%j is refused', (argv, why) => expect((readArgs(argv) as { error: string }).error).toMatch(why));
});
