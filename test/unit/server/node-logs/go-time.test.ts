// time.Parse(time.RFC3339, ...), time.Time.String() and the kubelet's journalctl dateLayout.
import { describe, expect, it } from 'vitest';
import { goTimeString, journalctlTime, parseRFC3339 } from '../../../../src/server/node-logs/go-time.js';

describe('RFC 3339 times as Go parses them', () => {
  it.each([
    ['2019-12-04T02:00:00Z', true],
    ['2019-12-04T02:00:00.123456789Z', true],
    ['2019-12-04T02:00:00+05:30', true],
    ['2019-12-04 02:00:00', false],
    ['2019-12-04T02:00:00', false],
    ['2019-12-04t02:00:00Z', false],
    ['2019-02-30T00:00:00Z', false],
    ['2019-13-01T00:00:00Z', false],
    ['2019-12-04T24:00:00Z', false],
    ['2019-12-04T02:00:60Z', false],
    ['2019-12-04T02:00:00+24:00', false],
    ['2020-02-29T00:00:00Z', true],
  ])('%s → %s', (s, ok) => {
    expect(parseRFC3339(s) !== undefined).toBe(ok);
  });

  it('keeps the instant (offset and nanoseconds)', () => {
    expect(parseRFC3339('1970-01-01T01:00:00+01:00')!.ns).toBe(0n);
    expect(parseRFC3339('1970-01-01T00:00:01.5Z')!.ns).toBe(1_500_000_000n);
  });

  it('prints as time.Time.String()', () => {
    expect(goTimeString(parseRFC3339('2023-01-04T02:00:00Z')!)).toBe('2023-01-04 02:00:00 +0000 UTC');
    expect(goTimeString(parseRFC3339('2023-01-04T02:00:00.250Z')!)).toBe('2023-01-04 02:00:00.25 +0000 UTC');
    expect(goTimeString(parseRFC3339('2023-01-04T02:00:00+05:30')!)).toBe('2023-01-04 02:00:00 +0530 +0530');
    expect(goTimeString(parseRFC3339('2023-01-04T02:00:00-08:00')!)).toBe('2023-01-04 02:00:00 -0800 -0800');
  });

  it('gives journalctl the instant in UTC, in the kubelet layout (2006-1-2 15:4:5), whole seconds', () => {
    expect(journalctlTime(parseRFC3339('2019-12-04T02:03:04.9Z')!)).toBe('2019-12-4 2:3:4 UTC');
    expect(journalctlTime(parseRFC3339('2019-12-04T02:03:04+01:00')!)).toBe('2019-12-4 1:3:4 UTC');
  });
});
