import { stripControls } from './text.js';

describe('stripControls', () => {
  it.each([
    ['plain text stays', 'gate 1/2 at partition 3', 'gate 1/2 at partition 3'],
    ['ESC sequences lose their ESC', '\u001b[2K\u001b[1Aforged', '[2K[1Aforged'],
    ['a one-byte CSI and BEL', 'a\u009b31mb\u0007c', 'a31mbc'],
    ['carriage return (rewrites the line)', 'done\rFAILED', 'doneFAILED'],
    ['newline and tab are kept', 'a\nb\tc', 'a\nb\tc'],
    ['unicode text is kept', 'pod web-0 bereit ✓', 'pod web-0 bereit ✓'],
  ])('%s', (_n, input, want) => expect(stripControls(input)).toBe(want));
});
