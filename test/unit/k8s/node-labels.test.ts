import { describe, expect, it } from 'vitest';
import { isKubeletLabel, isKubernetesNamespace, labelNamespace } from '../../../src/k8s/node-labels.js';

describe('node labels', () => {
  it('reads the namespace of a key', () => {
    expect(labelNamespace('kubernetes.io/os')).toBe('kubernetes.io');
    expect(labelNamespace('plain')).toBe('');
  });

  it('knows kubernetes.io and k8s.io and their subdomains, nothing that only ends alike', () => {
    expect(isKubernetesNamespace('kubernetes.io')).toBe(true);
    expect(isKubernetesNamespace('topology.kubernetes.io')).toBe(true);
    expect(isKubernetesNamespace('k8s.io')).toBe(true);
    expect(isKubernetesNamespace('x.k8s.io')).toBe(true);
    expect(isKubernetesNamespace('example.com')).toBe(false);
    expect(isKubernetesNamespace('notkubernetes.io')).toBe(false);
  });

  it('allows the kubelet its own labels and namespaces, not the rest of kubernetes.io', () => {
    expect(isKubeletLabel('kubernetes.io/hostname')).toBe(true);
    expect(isKubeletLabel('topology.kubernetes.io/zone')).toBe(true);
    expect(isKubeletLabel('node.kubernetes.io/anything')).toBe(true);
    expect(isKubeletLabel('x.kubelet.kubernetes.io/y')).toBe(true);
    expect(isKubeletLabel('node-role.kubernetes.io/control-plane')).toBe(false);
    expect(isKubeletLabel('kubernetes.io/role')).toBe(false);
  });
});
