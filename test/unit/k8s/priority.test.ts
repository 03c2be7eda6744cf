import type { Pod } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { isCriticalPod, isNodeCriticalPod, isStaticPod, podPriority } from '../../../src/k8s/priority.js';

function pod(spec: Partial<NonNullable<Pod['spec']>>, annotations?: Record<string, string>): Pod {
  return { metadata: { name: 'p', namespace: 'kube-system', annotations }, spec: { containers: [], ...spec } };
}

describe('podPriority (the Priority admission plugin, locally)', () => {
  it('resolves the two system classes to their built-in values', () => {
    expect(podPriority(pod({ priorityClassName: 'system-node-critical' }))).toBe(2_000_001_000);
    expect(podPriority(pod({ priorityClassName: 'system-cluster-critical' }))).toBe(2_000_000_000);
  });

  it('gives 0 (no default class known) to a pod without a class or with a class only a server knows', () => {
    expect(podPriority(pod({}))).toBe(0);
    expect(podPriority(pod({ priorityClassName: 'high' }))).toBe(0);
  });

  it('keeps a number already set (an API pod that went through admission)', () => {
    expect(podPriority(pod({ priority: 1000, priorityClassName: 'system-node-critical' }))).toBe(1000);
    expect(podPriority(pod({ priority: 0 }))).toBe(0);
  });
});

describe('isCriticalPod (types.IsCriticalPod)', () => {
  const file = { 'kubernetes.io/config.source': 'file' };
  it('counts every static pod as critical, whatever its class', () => {
    expect(isStaticPod(pod({}, file))).toBe(true);
    expect(isCriticalPod(pod({}, file))).toBe(true);
    expect(isCriticalPod(pod({}, { 'kubernetes.io/config.source': 'http' }))).toBe(true);
  });

  it('counts mirror pods and pods at or above SystemCriticalPriority', () => {
    expect(isCriticalPod(pod({}, { 'kubernetes.io/config.mirror': 'abc' }))).toBe(true);
    expect(
      isCriticalPod(pod({ priorityClassName: 'system-cluster-critical' }, { 'kubernetes.io/config.source': 'api' })),
    ).toBe(true);
    expect(isCriticalPod(pod({ priority: 1_999_999_999 }, { 'kubernetes.io/config.source': 'api' }))).toBe(false);
    expect(isCriticalPod(pod({}))).toBe(false);
  });

  it('is node-critical only with class system-node-critical', () => {
    expect(isNodeCriticalPod(pod({ priorityClassName: 'system-node-critical' }, file))).toBe(true);
    expect(isNodeCriticalPod(pod({ priorityClassName: 'system-cluster-critical' }, file))).toBe(false);
  });
});
