import { describe, expect, it } from 'vitest';
import { validateSchema } from '../../../src/config/validate-schema';
import { pod } from './helpers';

describe('validateSchema', () => {
  it('accepts a plain pod with no warnings', () => {
    expect(validateSchema(pod())).toEqual({ errors: [], warnings: [] });
  });

  it('names the field path of a wrong type', () => {
    const r = validateSchema(pod({ containers: [{ name: 'c', image: 'i', ports: [{ containerPort: '80' }] }] }));
    expect(r.errors).toEqual(['spec.containers[0].ports[0].containerPort: must be integer']);
  });

  it('refuses a fractional int32', () => {
    const r = validateSchema(pod({ terminationGracePeriodSeconds: 1.5 }));
    expect(r.errors).toEqual(['spec.terminationGracePeriodSeconds: must be integer']);
  });

  it('reports every wrong type, not just the first', () => {
    const r = validateSchema(pod({ hostNetwork: 'yes', containers: [{ name: 'c', image: 7 }] }));
    expect(r.errors).toEqual(expect.arrayContaining(['spec.hostNetwork: must be boolean', 'spec.containers[0].image: must be string']));
  });

  it('names a missing required field', () => {
    const r = validateSchema(pod({ containers: [{ image: 'i', ports: [{}] }] }));
    expect(r.errors).toEqual(expect.arrayContaining(['spec.containers[0].name: Required value', 'spec.containers[0].ports[0].containerPort: Required value']));
  });

  it('accepts quantities as numbers or strings', () => {
    const r = validateSchema(pod({ containers: [{ name: 'c', image: 'i', resources: { limits: { cpu: 1, memory: '1Gi' }, requests: { cpu: 0.5 } } }] }));
    expect(r.errors).toEqual([]);
  });

  it('accepts int-or-string ports as either, but not as a fraction', () => {
    const probe = (port: unknown) => pod({ containers: [{ name: 'c', image: 'i', livenessProbe: { httpGet: { port } } }] });
    expect(validateSchema(probe(8080)).errors).toEqual([]);
    expect(validateSchema(probe('http')).errors).toEqual([]);
    expect(validateSchema(probe(80.5)).errors).toEqual(['spec.containers[0].livenessProbe.httpGet.port: must be integer or string']);
  });

  it('warns about unknown fields by path, without refusing', () => {
    const r = validateSchema(pod({ containers: [{ name: 'c', image: 'i', imagePullPolcy: 'Always' }], bogus: 1 }));
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual(['unknown field "spec.containers[0].imagePullPolcy"', 'unknown field "spec.bogus"']);
  });

  it('does not warn inside maps (labels, annotations, resources)', () => {
    const r = validateSchema(pod({ nodeSelector: { 'kubernetes.io/os': 'linux' } }, { name: 'x', labels: { anything: 'goes' } }));
    expect(r.warnings).toEqual([]);
  });
});
