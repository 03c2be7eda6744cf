// io.kubernetes.container.hash exactly as kubelet >= 1.31 writes it, checked against the kubelet's
// own test vector and the values for kubeadm's containers (test/fixtures/kubelet).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Container } from 'kubernetes-types/core/v1';
import { containerMatchesSpec, hashContainer, kubeletContainerHash } from '../../../src/kuberuntime/container-hash.js';
import type { ContainerMeta } from '../../../src/kuberuntime/labels.js';
import { KUBEADM_VERSIONS } from '../../support/kubeadm-versions.js';

interface Vector {
  readonly container: Container;
  readonly annotation: string;
}
const vectors = JSON.parse(
  readFileSync(join(__dirname, '../../fixtures/kubelet/container-hash-vectors.json'), 'utf8'),
) as {
  upstreamVectors: Vector[];
  derivedVectors: { containers: Array<{ name: string; image: string; annotation: string }> };
};

describe('kubeletContainerHash', () => {
  it("reproduces the kubelet's own test vector (container_hash_test.go, 0x8e45cbd0)", () => {
    const [v] = vectors.upstreamVectors;
    expect(v?.annotation).toBe('8e45cbd0');
    expect(kubeletContainerHash(v!.container)).toBe(v!.annotation);
  });

  it('reproduces the values for every kubeadm control-plane container', () => {
    const derived = vectors.derivedVectors.containers;
    // Four containers for each kubeadm release of the corpus.
    expect(derived).toHaveLength(KUBEADM_VERSIONS.length * 4);
    for (const v of derived) expect(kubeletContainerHash(v)).toBe(v.annotation);
  });

  it('covers only name and image', () => {
    const a = { name: 'etcd', image: 'registry.k8s.io/etcd:3.5.16-0' };
    expect(kubeletContainerHash({ ...a, command: ['etcd', '--x'] } as Container)).toBe(kubeletContainerHash(a));
    expect(kubeletContainerHash({ ...a, image: 'registry.k8s.io/etcd:3.6.4-0' })).not.toBe(kubeletContainerHash(a));
  });

  it('escapes as Go does (<, >, & and control characters)', () => {
    // Go's json.Marshal writes "<" as \u003c: the hash must be over that, not over "<".
    expect(kubeletContainerHash({ name: 'c', image: 'a<b' })).not.toBe(
      kubeletContainerHash({ name: 'c', image: 'a\\u003cb' }),
    );
    const printedOf = (image: string) => kubeletContainerHash({ name: 'c', image });
    expect(printedOf('x&y')).toMatch(/^[0-9a-f]{1,8}$/);
  });
});

describe('containerMatchesSpec', () => {
  const spec: Container = { name: 'etcd', image: 'registry.k8s.io/etcd:3.5.16-0', command: ['etcd'] };
  const meta = (m: Partial<ContainerMeta>): ContainerMeta => ({
    podName: 'p',
    podNamespace: 'n',
    podUid: 'u',
    containerName: 'etcd',
    hash: '0',
    restartCount: 0,
    ...m,
  });

  it("matches a kubelet-made container by the kubelet's name-and-image hash", () => {
    expect(containerMatchesSpec(meta({ hash: kubeletContainerHash(spec) }), spec)).toBe(true);
    expect(
      containerMatchesSpec(meta({ hash: kubeletContainerHash(spec) }), { ...spec, command: ['etcd', '--new'] }),
    ).toBe(true);
    expect(containerMatchesSpec(meta({ hash: '1234' }), spec)).toBe(false);
  });

  it("matches a bootlet-made container by bootlet's whole-spec hash, so any change restarts it", () => {
    const m = meta({ hash: kubeletContainerHash(spec), specHash: hashContainer(spec) });
    expect(containerMatchesSpec(m, spec)).toBe(true);
    expect(containerMatchesSpec(m, { ...spec, command: ['etcd', '--new'] })).toBe(false);
  });
});
