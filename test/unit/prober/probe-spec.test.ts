// Probe defaults applied again by the prober, and port resolution.
import { describe, expect, it } from 'vitest';
import { resolveContainerPort, joinHostPort } from '../../../src/prober/port.js';
import { probeTiming } from '../../../src/prober/probe-spec.js';

describe('probeTiming', () => {
  it("applies the kubelet's defaults to a probe that was not defaulted", () => {
    expect(probeTiming({ exec: { command: ['x'] } }, 'readiness')).toEqual({
      initialDelayMs: 0,
      periodMs: 10_000,
      timeoutSeconds: 1,
      successThreshold: 1,
      failureThreshold: 3,
    });
  });

  it('keeps given values; success threshold is 1 for liveness and startup', () => {
    const p = { initialDelaySeconds: 5, periodSeconds: 2, timeoutSeconds: 3, successThreshold: 4, failureThreshold: 6 };
    expect(probeTiming(p, 'readiness')).toEqual({
      initialDelayMs: 5000,
      periodMs: 2000,
      timeoutSeconds: 3,
      successThreshold: 4,
      failureThreshold: 6,
    });
    expect(probeTiming(p, 'liveness').successThreshold).toBe(1);
    expect(probeTiming(p, 'startup').successThreshold).toBe(1);
  });
});

describe('resolveContainerPort', () => {
  const c = { name: 'c', ports: [{ name: 'metrics', containerPort: 9100 }] };
  it('takes a number or a named container port', () => {
    expect(resolveContainerPort(8080, c)).toEqual({ port: 8080 });
    expect(resolveContainerPort('metrics', c)).toEqual({ port: 9100 });
  });
  it('refuses unknown names, numbers in quotes and out-of-range ports', () => {
    expect(resolveContainerPort('http', c)).toEqual({ error: 'port "http" not found' });
    expect(resolveContainerPort('8080', c)).toEqual({ error: 'port "8080" not found' });
    expect(resolveContainerPort(70000, c)).toEqual({ error: 'invalid port number: 70000' });
  });
  it('brackets IPv6 hosts', () => {
    expect(joinHostPort('::1', 80)).toBe('[::1]:80');
    expect(joinHostPort('10.0.0.1', 80)).toBe('10.0.0.1:80');
  });
});
