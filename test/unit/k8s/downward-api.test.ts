import { describe, expect, it } from 'vitest';
import { formatMap, goQuote, resourceFieldValue, volumeFieldValue } from '../../../src/k8s/downward-api.js';

const NODE = { cpuMillis: 4000, memoryBytes: 8 * 1024 ** 3, ephemeralStorageBytes: 0 };

describe('downward API values of a volume file', () => {
  it('quotes as Go %q does', () => {
    expect(goQuote('plain')).toBe('"plain"');
    expect(goQuote('a"b\\c\n\t\x01\x7f')).toBe('"a\\"b\\\\c\\n\\t\\x01\\x7f"');
    expect(goQuote('héllo ✓')).toBe('"héllo ✓"');
  });

  it('formats a map in key order without a trailing newline', () => {
    expect(formatMap({ b: '2', a: '1' })).toBe('a="1"\nb="2"');
    expect(formatMap(undefined)).toBe('');
  });

  it('names the fields a volume may use and refuses the env-only ones', () => {
    const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u', labels: { k: 'v' }, annotations: { 'x/y': 'z' } } };
    expect(volumeFieldValue(pod, 'metadata.name')).toBe('p');
    expect(volumeFieldValue(pod, "metadata.annotations['x/y']")).toBe('z');
    expect(volumeFieldValue(pod, "metadata.labels['missing']")).toBe('');
    expect(volumeFieldValue(pod, 'metadata.labels')).toBe('k="v"');
    expect(() => volumeFieldValue(pod, 'status.podIP')).toThrow('unsupported fieldPath: status.podIP');
  });

  it('rounds resources up to the divisor; an unset limit is the node allocatable', () => {
    const c = { name: 'c', resources: { requests: { cpu: '100m', memory: '1500k' } } };
    expect(resourceFieldValue(c, { resource: 'requests.cpu' }, NODE)).toBe('1');
    expect(resourceFieldValue(c, { resource: 'requests.cpu', divisor: '1m' }, NODE)).toBe('100');
    expect(resourceFieldValue(c, { resource: 'requests.memory', divisor: '1Mi' }, NODE)).toBe('2');
    expect(resourceFieldValue(c, { resource: 'limits.cpu' }, NODE)).toBe('4');
    expect(resourceFieldValue(c, { resource: 'limits.memory', divisor: '1Gi' }, NODE)).toBe('8');
    expect(() => resourceFieldValue(c, { resource: 'limits.gpu' }, NODE)).toThrow(
      'unsupported container resource : limits.gpu',
    );
  });
});
