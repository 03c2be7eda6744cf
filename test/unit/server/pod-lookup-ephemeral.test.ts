// The kubelet API finds an ephemeral container as any other: its spec for attach/exec, its running
// instance from ephemeralContainerStatuses, its log container.
import { describe, expect, it } from 'vitest';
import { logContainerId, requireContainer, runningContainerId } from '../../../src/server/kubelet/pod-lookup.js';
import type { PodStatusEntry } from '../../../src/status/status-manager.js';

const entry: PodStatusEntry = {
  uid: 'u1',
  key: 'default/target',
  pod: {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'target', namespace: 'default', uid: 'u1', annotations: {} },
    spec: {
      containers: [{ name: 'main', image: 'busybox' }],
      ephemeralContainers: [{ name: 'debugger', image: 'busybox', targetContainerName: 'main' }],
    },
  },
  status: {
    containerStatuses: [
      {
        name: 'main',
        image: 'busybox',
        imageID: '',
        ready: true,
        restartCount: 0,
        containerID: 'containerd://aaa',
        state: { running: {} },
      },
    ],
    ephemeralContainerStatuses: [
      {
        name: 'debugger',
        image: 'busybox',
        imageID: '',
        ready: false,
        restartCount: 0,
        containerID: 'containerd://bbb',
        state: { running: {} },
      },
    ],
  },
};

describe('pod lookup: ephemeral containers', () => {
  it('finds the spec, the running instance and the log of an ephemeral container', () => {
    expect(requireContainer(entry, 'debugger').name).toBe('debugger');
    expect(runningContainerId(entry, 'debugger')).toBe('bbb');
    expect(logContainerId(entry, 'debugger', false)).toBe('bbb');
    expect(() => requireContainer(entry, 'other')).toThrow(/container "other" not found/);
  });
});
