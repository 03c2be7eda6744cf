import { describe, expect, it } from 'vitest';
import { apiMicroTime, apiTime, apiTimeFromNs, formatRfc3339Nano, truncateTime } from '../../../src/util/api-time.js';

describe('API times', () => {
  const d = new Date('2025-01-01T10:00:05.987Z');

  it('metav1.Time: whole seconds, the fraction dropped, not rounded', () => {
    expect(apiTime(d)).toBe('2025-01-01T10:00:05Z');
    expect(apiTime(new Date('2025-01-01T10:00:05Z'))).toBe('2025-01-01T10:00:05Z');
  });

  it('MicroTime: six digits; RFC3339Nano: nine', () => {
    expect(apiMicroTime(d)).toBe('2025-01-01T10:00:05.987000Z');
    expect(formatRfc3339Nano(d)).toBe('2025-01-01T10:00:05.987000000Z');
    expect(formatRfc3339Nano(new Date('2025-01-01T10:00:00Z'))).toBe('2025-01-01T10:00:00.000000000Z');
  });

  it('from CRI nanoseconds; 0 means never', () => {
    expect(apiTimeFromNs(1_735_725_605_987_654_321)).toBe('2025-01-01T10:00:05Z');
    expect(apiTimeFromNs(0)).toBeUndefined();
  });

  it('truncates RFC 3339 strings to the second for comparison, leaves anything else alone', () => {
    expect(truncateTime('2025-01-01T10:00:05.999999Z')).toBe('2025-01-01T10:00:05Z');
    expect(truncateTime('2025-01-01T12:00:05.5+02:00')).toBe('2025-01-01T10:00:05Z');
    expect(truncateTime('not a time')).toBe('not a time');
  });
});
