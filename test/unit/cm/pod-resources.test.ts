import type { Container, Pod } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { podCpuRequestMilli, resourceConfigForPod } from '../../../src/cm/pod-resources.js';

const opts = { enforceCpuLimits: true, podPidsLimit: -1 };

function c(
  name: string,
  requests?: Record<string, string>,
  limits?: Record<string, string>,
  extra: Partial<Container> = {},
): Container {
  return {
    name,
    image: 'busybox',
    resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) },
    ...extra,
  };
}

function pod(containers: Container[], initContainers: Container[] = [], extra: Partial<Pod['spec']> = {}): Pod {
  return {
    metadata: { name: 'p', namespace: 'kube-system', uid: 'u1' },
    spec: { containers, initContainers, ...extra },
  };
}

describe('resourceConfigForPod', () => {
  it('Guaranteed: shares, quota and period, memory limit', () => {
    const p = pod([
      c('a', { cpu: '500m', memory: '64Mi' }, { cpu: '500m', memory: '64Mi' }),
      c('b', { cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' }),
    ]);
    expect(resourceConfigForPod(p, opts)).toEqual({
      cpuShares: 1536,
      cpuQuota: 150000,
      cpuPeriod: 100000,
      memoryLimit: 64 * 2 ** 20 + 2 ** 30,
    });
  });

  it('Burstable with every container limited: quota and memory limit from the summed limits', () => {
    const p = pod([
      c('a', { cpu: '250m', memory: '32Mi' }, { cpu: '1', memory: '128Mi' }),
      c('b', { cpu: '250m' }, { cpu: '500m', memory: '64Mi' }),
    ]);
    expect(resourceConfigForPod(p, opts)).toEqual({
      cpuShares: 512,
      cpuQuota: 150000,
      cpuPeriod: 100000,
      memoryLimit: 192 * 2 ** 20,
    });
  });

  it('Burstable with a container unlimited: shares only for that resource', () => {
    const p = pod([c('a', { cpu: '100m', memory: '32Mi' }, { cpu: '1', memory: '128Mi' }), c('b', { cpu: '100m' })]);
    expect(resourceConfigForPod(p, opts)).toEqual({ cpuShares: 204 });
    const memOnly = pod([c('a', { cpu: '100m' }, { memory: '128Mi' })]);
    expect(resourceConfigForPod(memOnly, opts)).toEqual({ cpuShares: 102, memoryLimit: 128 * 2 ** 20 });
  });

  it('BestEffort: 2 shares, nothing else', () => {
    expect(resourceConfigForPod(pod([c('a'), c('b')]), opts)).toEqual({ cpuShares: 2 });
  });

  it('an init container counts alone, as its peak; sidecars add to the regular containers', () => {
    const init = c('init', { cpu: '2' }, undefined);
    const p = pod([c('a', { cpu: '500m' })], [init]);
    expect(podCpuRequestMilli(p)).toBe(2000);
    const sidecar = c('proxy', { cpu: '300m' }, undefined, { restartPolicy: 'Always' });
    const withSidecar = pod([c('a', { cpu: '500m' })], [sidecar, c('late-init', { cpu: '100m' })]);
    // regular 500m + sidecar 300m; the later init container runs beside the sidecar: 400m < 800m.
    expect(podCpuRequestMilli(withSidecar)).toBe(800);
    expect(resourceConfigForPod(withSidecar, opts).cpuShares).toBe(819);
  });

  it('an init container without a limit leaves the pod without a cpu quota', () => {
    const p = pod(
      [c('a', { cpu: '500m', memory: '1Mi' }, { cpu: '500m', memory: '1Mi' })],
      [c('init', { cpu: '100m' })],
    );
    expect(resourceConfigForPod(p, opts)).toEqual({ cpuShares: 512 });
  });

  it('pod overhead adds to requests and to limits that are set', () => {
    const p = pod([c('a', { cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' })], [], {
      overhead: { cpu: '250m', memory: '128Mi' },
    });
    expect(resourceConfigForPod(p, opts)).toEqual({
      cpuShares: 1280,
      cpuQuota: 125000,
      cpuPeriod: 100000,
      memoryLimit: 2 ** 30 + 128 * 2 ** 20,
    });
  });

  it('cpuCFSQuota off: no quota; podPidsLimit when set', () => {
    const p = pod([c('a', { cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' })]);
    expect(resourceConfigForPod(p, { enforceCpuLimits: false, podPidsLimit: 1024 })).toEqual({
      cpuShares: 1024,
      cpuQuota: -1,
      cpuPeriod: 100000,
      memoryLimit: 2 ** 30,
      pidsLimit: 1024,
    });
  });

  it('a tiny limit gets the kernel minimum quota; shares stay within the kernel range', () => {
    const p = pod([c('a', { cpu: '1m', memory: '1Mi' }, { cpu: '1m', memory: '1Mi' })]);
    expect(resourceConfigForPod(p, opts)).toMatchObject({ cpuShares: 2, cpuQuota: 1000 });
    expect(resourceConfigForPod(pod([c('a', { cpu: '1000' })]), opts).cpuShares).toBe(262144);
  });
});
