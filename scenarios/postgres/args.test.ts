import { readArgs } from './args.js';

describe('readArgs', () => {
  it.each([
    [['upgrade'], { name: 'upgrade', system: 'ours', rate: 20, keep: false, quiet: false }],
    [['bad-release', '--system', 'plain', '--rate', '50', '--keep'], { name: 'bad-release', system: 'plain', rate: 50, keep: true }],
    [['upgrade', '--system', 'ours-no-hooks', '--quiet'], { system: 'ours-no-hooks', quiet: true }],
  ])('%j', (argv, want) => expect(readArgs(argv)).toMatchObject(want));
  it.each([
    [[], /^one scenario/],
    [['zones'], /^one scenario/],
    [['upgrade', '--system', 'grafana'], /^--system is one of ours, ours-no-hooks, plain/],
    [['upgrade', '--rate', '2e1'], /^--rate is writes per second/],
    [['upgrade', '--rate', '0'], /^--rate is writes per second/],
    [['upgrade', '--bogus'], /bogus/],
  ])('%j is refused', (argv, why) => expect((readArgs(argv) as { error: string }).error).toMatch(why));
});
