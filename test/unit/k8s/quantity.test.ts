import { describe, expect, it } from 'vitest';
import { parseQuantity } from '../../../src/k8s/quantity.js';

describe('parseQuantity', () => {
  it.each([
    ['100m', 0.1, 1, 100],
    ['1', 1, 1, 1000],
    ['2.5', 2.5, 3, 2500],
    ['0.1', 0.1, 1, 100],
    ['1Ki', 1024, 1024, 1024000],
    ['1Gi', 2 ** 30, 2 ** 30, 2 ** 30 * 1000],
    ['500M', 5e8, 5e8, 5e11],
    ['1e3', 1000, 1000, 1e6],
    ['1E3', 1000, 1000, 1e6],
    ['1.5e-3', 0.0015, 1, 2],
    ['1k', 1000, 1000, 1e6],
    ['250u', 0.00025, 1, 1],
    ['.5', 0.5, 1, 500],
    ['0', 0, 0, 0],
  ])('%s', (text, num, value, milli) => {
    const q = parseQuantity(text);
    expect(q.toNumber()).toBeCloseTo(num, 9);
    expect(q.value()).toBe(value);
    expect(q.milliValue()).toBe(milli);
  });

  it('accepts YAML numbers', () => {
    expect(parseQuantity(2).milliValue()).toBe(2000);
    expect(parseQuantity(0.5).milliValue()).toBe(500);
  });

  it('rejects what is not a quantity', () => {
    for (const bad of ['', 'abc', '1Gb', '1 Gi', '--1', '1.2.3', 'Mi'])
      expect(() => parseQuantity(bad), bad).toThrow(/quantities must match/);
  });

  it('compares and adds exactly', () => {
    expect(parseQuantity('1').cmp(parseQuantity('1000m'))).toBe(0);
    expect(parseQuantity('1Gi').cmp(parseQuantity('1G'))).toBe(1);
    expect(parseQuantity('0.1').plus(parseQuantity('0.2')).cmp(parseQuantity('300m'))).toBe(0);
  });
});

describe('Quantity.canonical (Go Quantity.String(), what API server messages show)', () => {
  it.each([
    ['2', '2'],
    ['-1Gi', '-1Gi'],
    ['1.5Gi', '1536Mi'],
    ['1024Ki', '1Mi'],
    ['1023Mi', '1023Mi'],
    ['0.1Gi', '107374182400m'],
    ['512Ki', '512Ki'],
    ['100', '100'],
    ['0.5', '500m'],
    ['1000', '1k'],
    ['1000m', '1'],
    ['-500m', '-500m'],
    ['1500M', '1500M'],
    ['128974848', '128974848'],
    ['1e3', '1e3'],
    ['1.5e3', '1500'],
    ['129e6', '129e6'],
    ['1e-10', '1e-9'],
    ['0.0000000001', '1n'],
    ['-0', '0'],
  ])('%s is %s', (text, shown) => {
    expect(parseQuantity(text).canonical()).toBe(shown);
  });
  it('a YAML number is its decimal text', () => {
    expect(parseQuantity(0.25).canonical()).toBe('250m');
  });
});
