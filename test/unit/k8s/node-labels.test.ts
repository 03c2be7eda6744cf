import { describe, expect, it } from 'vitest';
import { isKubeletLabel, isKubernetesNamespace, labelNamespace } from '../../../src/k8s/node-labels.js';

describe('node labels', () => {
  it('reads the namespace of a key', () => {
    expect(labelNamespace('kubernetes.io/os')).toBe('kubernetes.io');
    expect(labelNamespace('plain')).toBe('');
  });

  it.each([
    ['kubernetes.io', true],
    ['topology.kubernetes.io', true],
    ['k8s.io', true],
    ['x.k8s.io', true],
    ['example.com', false],
    ['notkubernetes.io', false],
  ])('namespace %s is Kubernetes-owned: %s', (ns, want) => {
    expect(isKubernetesNamespace(ns)).toBe(want);
  });

  it.each([
    ['kubernetes.io/hostname', true],
    ['topology.kubernetes.io/zone', true],
    ['node.kubernetes.io/anything', true],
    ['x.kubelet.kubernetes.io/y', true],
    ['node-role.kubernetes.io/control-plane', false],
    ['kubernetes.io/role', false],
  ])('a kubelet may set %s on its Node: %s', (key, want) => {
    expect(isKubeletLabel(key)).toBe(want);
  });
});
