import { describe, expect, it } from 'vitest';
import { isoTime } from '../../../src/util/iso-time.js';

describe('isoTime', () => {
  it('writes what toISOString writes, from the UTC getters', () => {
    const times = [
      0, 1, 999, 1000, 951_782_400_000 /* 2000-02-29 */, 1_735_725_605_987,
      253_402_300_799_999 /* 9999-12-31T23:59:59.999Z */, -62_167_219_200_000 /* 0000-01-01 */,
    ];
    // and a spread of instants over four centuries, leap days and month ends among them
    for (let t = -2_208_988_800_000; t < 4_102_444_800_000; t += 86_399_937_013) times.push(t);
    for (const t of times) expect(isoTime(t)).toBe(new Date(t).toISOString());
  });

  it('leaves years outside 0–9999 and invalid times to toISOString', () => {
    expect(isoTime(-62_167_219_200_001)).toBe('-000001-12-31T23:59:59.999Z');
    expect(isoTime(253_402_300_800_000)).toBe('+010000-01-01T00:00:00.000Z');
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
  });
});
