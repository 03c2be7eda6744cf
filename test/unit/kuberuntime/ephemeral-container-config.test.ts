// An ephemeral container's config: the kubelet's type annotation, and the target's PID namespace
// (NamespaceMode TARGET with target_id) when the pod gives each container its own.
import { describe, expect, it } from 'vitest';
import { buildContainerConfig, type ContainerConfigContext } from '../../../src/kuberuntime/container-config.js';
import { NamespaceMode } from '../../../src/cri/cri-types.js';
import { parseContainerMeta } from '../../../src/kuberuntime/labels.js';
import { container, pod } from './fixtures.js';

function ctx(over: Partial<ContainerConfigContext> = {}): ContainerConfigContext {
  return {
    restartCount: 0,
    imageRef: 'sha256:abc',
    type: 'ephemeral',
    nodeName: 'node1',
    hostIP: '192.0.2.10',
    podIPs: [],
    mounts: [],
    nodeMemoryCapacityBytes: 2 ** 30,
    ...over,
  };
}

describe('ephemeral container config', () => {
  it('joins the target container PID namespace', () => {
    const cfg = buildContainerConfig(pod(), container({ name: 'debugger' }), ctx({ targetContainerId: 'abc123' }));
    expect(cfg.linux?.securityContext?.namespaceOptions).toMatchObject({
      pid: NamespaceMode.TARGET,
      targetId: 'abc123',
    });
    expect(cfg.annotations?.['io.kubernetes.container.type']).toBe('ephemeral');
    expect(parseContainerMeta(cfg.labels, cfg.annotations)?.type).toBe('ephemeral');
  });

  it('keeps its own PID namespace without a target, and the pod one when the pod shares it', () => {
    expect(buildContainerConfig(pod(), container(), ctx()).linux?.securityContext?.namespaceOptions?.pid).toBe(
      NamespaceMode.CONTAINER,
    );
    const shared = pod();
    shared.spec = { ...shared.spec!, shareProcessNamespace: true };
    const ns = buildContainerConfig(shared, container(), ctx({ targetContainerId: 'abc123' })).linux?.securityContext
      ?.namespaceOptions;
    expect(ns?.pid).toBe(NamespaceMode.POD);
    expect(ns?.targetId ?? '').toBe('');
  });
});
