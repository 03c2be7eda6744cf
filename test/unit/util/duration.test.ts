import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../../src/util/duration.js';

describe('durations, as Go parses them', () => {
  it.each([
    ['20s', 20_000],
    ['1m30s', 90_000],
    ['500ms', 500],
    ['1h', 3_600_000],
    ['0', 0],
    ['0s', 0],
    ['1.5s', 1500],
    ['.5s', 500],
    ['-1m', -60_000],
    ['+2s', 2000],
    ['1500us', 1.5],
    ['3μs', 0.003],
  ])('%s is %d ms', (text, ms) => expect(parseDuration(text)).toBeCloseTo(ms, 9));

  it.each(['', '10', '5 minutes', 's', '1d', '-'])('refuses %j', (text) =>
    expect(() => parseDuration(text)).toThrow('invalid duration'),
  );

  it('formats in the largest whole unit', () => {
    expect([formatDuration(3_600_000), formatDuration(90_000), formatDuration(20_000), formatDuration(250)]).toEqual([
      '1h',
      '90s',
      '20s',
      '250ms',
    ]);
  });
});
