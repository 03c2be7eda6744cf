import type { JsonObject } from '../../support/fake-apiserver/index.js';

export const NODE_USER = (node: string): { user: string; groups: string[] } => ({
  user: `system:node:${node}`,
  groups: ['system:nodes'],
});

/** A Node as a kubelet registers it, Ready. */
export function nodeObject(name: string, ready = true): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' },
    },
    spec: {},
    status: {
      conditions: [
        {
          type: 'MemoryPressure',
          status: 'False',
          reason: 'KubeletHasSufficientMemory',
          lastHeartbeatTime: '2026-01-01T00:00:00Z',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
        {
          type: 'Ready',
          status: ready ? 'True' : 'False',
          reason: ready ? 'KubeletReady' : 'KubeletNotReady',
          lastHeartbeatTime: '2026-01-01T00:00:00Z',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
      capacity: { cpu: '2', memory: '4014592Ki', pods: '110', 'ephemeral-storage': '30830568Ki' },
      allocatable: { cpu: '2', memory: '3912192Ki', pods: '110', 'ephemeral-storage': '28413217573' },
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      addresses: [
        { type: 'InternalIP', address: '10.0.0.7' },
        { type: 'Hostname', address: name },
      ],
      nodeInfo: {
        kubeletVersion: 'v1.32.4',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        kernelVersion: '6.1.0-test',
        containerRuntimeVersion: 'containerd://1.6.20',
        operatingSystem: 'linux',
        architecture: 'amd64',
        machineID: '',
        systemUUID: '',
        bootID: '',
        kubeProxyVersion: '',
      },
    },
  };
}

/** A mirror pod as a kubelet on `node` creates it for a static pod. */
export function mirrorPod(name: string, node: string, nodeUid: string, extraSpec: JsonObject = {}): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${name}-${node}`,
      namespace: 'kube-system',
      labels: { component: name, tier: 'control-plane' },
      annotations: {
        'kubernetes.io/config.hash': 'abc123',
        'kubernetes.io/config.mirror': 'abc123',
        'kubernetes.io/config.source': 'file',
        'kubernetes.io/config.seen': '2026-01-01T00:00:00Z',
      },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node, uid: nodeUid, controller: true }],
    },
    spec: {
      nodeName: node,
      hostNetwork: true,
      priorityClassName: 'system-node-critical',
      containers: [{ name, image: 'registry.k8s.io/etcd:3.5.16-0', command: ['etcd'] }],
      ...extraSpec,
    },
  };
}

/** The status a kubelet reports for a running single-container pod. */
export function runningStatus(container: string, ip = '10.0.0.7'): JsonObject {
  return {
    phase: 'Running',
    podIP: ip,
    podIPs: [{ ip }],
    hostIP: ip,
    startTime: '2026-01-01T00:00:00Z',
    conditions: [
      { type: 'Initialized', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' },
      { type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:01Z' },
      { type: 'ContainersReady', status: 'True', lastTransitionTime: '2026-01-01T00:00:01Z' },
      { type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' },
    ],
    containerStatuses: [
      {
        name: container,
        ready: true,
        started: true,
        restartCount: 0,
        image: 'registry.k8s.io/etcd:3.5.16-0',
        imageID: 'registry.k8s.io/etcd@sha256:0000',
        containerID: 'containerd://' + 'a'.repeat(64),
        state: { running: { startedAt: '2026-01-01T00:00:00Z' } },
        lastState: {},
      },
    ],
  };
}
