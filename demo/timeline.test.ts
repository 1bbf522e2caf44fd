import { seconds, stepsOf, timeline, type DemoEvent } from './timeline.js';

const ev = (reason: string, at: number, count = 1, message = reason.toLowerCase()): DemoEvent => ({ reason, message, at, count });

describe('demo timeline', () => {
  it('shows the controller Events oldest first, with seconds since the start and repeat counts', () => {
    const events = [ev('RolloutCompleted', 9000), ev('SuccessfulCreate', 500), ev('RolloutStarted', 1000), ev('CheckFailed', 5000, 2, 'gate failed: no'), ev('RolloutQueued', -400)];
    expect(timeline(events, 0)).toEqual([
      '  +   0s  RolloutQueued     rolloutqueued',
      '  +   1s  RolloutStarted    rolloutstarted',
      '  +   5s  CheckFailed       gate failed: no (x2, last shown)',
      '  +   9s  RolloutCompleted  rolloutcompleted',
    ]);
  });

  it('counts partition steps, aggregated Events included', () => {
    expect(stepsOf([ev('PartitionLowered', 1, 3), ev('PartitionLowered', 2), ev('RolloutStarted', 0)])).toBe(4);
  });

  it('formats seconds', () => expect(seconds(12345)).toBe('12.3 s'));
});
