// A probe's timing parameters with the API defaults applied again here, so a probe that did not go
// through config defaulting (a test, a future source) still behaves as the kubelet's would.
import type { Probe } from 'kubernetes-types/core/v1';
import type { ProbeType } from './types.js';

export interface ProbeTiming {
  initialDelayMs: number;
  periodMs: number;
  timeoutSeconds: number;
  successThreshold: number;
  failureThreshold: number;
}

function atLeast(value: number | undefined, fallback: number, min: number): number {
  if (value === undefined || value === null || !Number.isFinite(value) || value <= 0) return fallback;
  return Math.max(min, Math.floor(value));
}

export function probeTiming(probe: Probe, type: ProbeType): ProbeTiming {
  return {
    initialDelayMs: Math.max(0, Math.floor(probe.initialDelaySeconds ?? 0)) * 1000,
    periodMs: atLeast(probe.periodSeconds, 10, 1) * 1000,
    timeoutSeconds: atLeast(probe.timeoutSeconds, 1, 1),
    // Validation requires 1 for liveness and startup; a larger value would only delay a kill.
    successThreshold: type === 'readiness' ? atLeast(probe.successThreshold, 1, 1) : 1,
    failureThreshold: atLeast(probe.failureThreshold, 3, 1),
  };
}
