// Stand-ins for what bootlet feeds the API agent: static pods, their computed statuses, node facts.
import type { Pod, PodStatus } from 'kubernetes-types/core/v1';
import { applySchemeDefaults } from '../../../src/k8s/defaults.js';
import { applyIdentity } from '../../../src/config/identity.js';
import type { StaticPod } from '../../../src/config/types.js';
import type { NodeInfoSource } from '../../../src/node/node-info.js';
import type { PodStatusSource, StaticPodSource } from '../../../src/apiserver/pod-sources.js';

export function staticPod(
  name: string,
  node: string,
  opts: { image?: string; namespace?: string; labels?: Record<string, string> } = {},
): StaticPod {
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: opts.namespace ?? 'kube-system',
      labels: opts.labels ?? { component: name, tier: 'control-plane' },
    },
    spec: {
      hostNetwork: true,
      priorityClassName: 'system-node-critical',
      containers: [{ name, image: opts.image ?? 'registry.k8s.io/etcd:3.5.16-0', command: [name] }],
    },
  };
  return applyIdentity({
    defaulted: applySchemeDefaults(pod),
    nodeName: node,
    file: `/etc/kubernetes/manifests/${name}.yaml`,
    seen: new Date('2026-01-01T00:00:00Z'),
  });
}

export class FakeStaticPods implements StaticPodSource {
  private pods = new Map<string, StaticPod>();
  private readonly listeners: (() => void)[] = [];
  private readonly removedListeners: ((p: StaticPod) => void)[] = [];
  complete = true;

  constructor(initial: StaticPod[] = []) {
    for (const p of initial) this.pods.set(p.key, p);
  }
  list(): StaticPod[] {
    return [...this.pods.values()];
  }
  ready(): boolean {
    return this.complete;
  }
  onChange(l: () => void): void {
    this.listeners.push(l);
  }
  set(p: StaticPod): void {
    this.pods.set(p.key, p);
    for (const l of this.listeners) l();
  }
  onRemoved(l: (p: StaticPod) => void): void {
    this.removedListeners.push(l);
  }
  remove(key: string): void {
    const gone = this.pods.get(key);
    this.pods.delete(key);
    // As the desired set does: who reads removals hears before the change listeners.
    if (gone) for (const l of this.removedListeners) l(gone);
    for (const l of this.listeners) l();
  }
  get(key: string): StaticPod | undefined {
    return this.pods.get(key);
  }
  podByKey(key: string): StaticPod | undefined {
    return this.pods.get(key);
  }
  podByUid(uid: string): StaticPod | undefined {
    return [...this.pods.values()].find((p) => p.uid === uid);
  }
}

export class FakeStatuses implements PodStatusSource {
  private readonly statuses = new Map<string, PodStatus>();
  private readonly listeners: ((uid: string) => void)[] = [];
  get(uid: string): PodStatus | undefined {
    return this.statuses.get(uid);
  }
  onChange(l: (uid: string) => void): void {
    this.listeners.push(l);
  }
  set(uid: string, s: PodStatus): void {
    this.statuses.set(uid, s);
    for (const l of this.listeners) l(uid);
  }
}

/** The status of a running single-container static pod, with `restarts` restarts. */
export function runningStatus(sp: StaticPod, restarts = 0, ip = '10.0.0.7'): PodStatus {
  const c = sp.pod.spec?.containers[0];
  const t = '2026-01-01T00:00:00Z';
  return {
    phase: 'Running',
    hostIP: ip,
    hostIPs: [{ ip }],
    podIP: ip,
    podIPs: [{ ip }],
    startTime: t,
    qosClass: 'BestEffort',
    conditions: [
      {
        type: 'PodReadyToStartContainers',
        status: 'True',
        lastProbeTime: null as unknown as undefined,
        lastTransitionTime: t,
      },
      { type: 'Initialized', status: 'True', lastTransitionTime: t },
      { type: 'Ready', status: 'True', lastTransitionTime: t },
      { type: 'ContainersReady', status: 'True', lastTransitionTime: t },
      { type: 'PodScheduled', status: 'True', lastTransitionTime: t },
    ],
    containerStatuses: [
      {
        name: c?.name ?? 'c',
        image: c?.image ?? 'i',
        imageID: `${c?.image ?? 'i'}@sha256:${'0'.repeat(64)}`,
        containerID: `containerd://${(restarts + 1).toString(16).padStart(64, 'a')}`,
        ready: true,
        started: true,
        restartCount: restarts,
        state: { running: { startedAt: t } },
        lastState:
          restarts > 0
            ? {
                terminated: {
                  exitCode: 1,
                  reason: 'Error',
                  startedAt: t,
                  finishedAt: t,
                  containerID: 'containerd://' + 'b'.repeat(64),
                },
              }
            : {},
      },
    ],
  };
}

export function fakeNodeInfo(nodeName: string, overrides: Partial<NodeInfoSource> = {}): NodeInfoSource {
  return {
    nodeName,
    nodeIP: '10.0.0.7',
    runtimeVersion: 'containerd://1.6.20',
    kubeletVersion: 'v0.1.0-bootlet',
    labels: { 'example.com/pool': 'control-plane' },
    taints: [],
    runtimeReady: () => true,
    osImage: 'Debian GNU/Linux 12 (bookworm)',
    kernelVersion: '6.1.0-test',
    architecture: 'amd64',
    operatingSystem: 'linux',
    machineID: 'm',
    bootID: 'b',
    systemUUID: 's',
    capacity: () => ({ cpu: '2', memory: '4014592Ki', pods: '110', 'ephemeral-storage': '30830568Ki' }),
    allocatable: () => ({ cpu: '2', memory: '3912192Ki', pods: '110', 'ephemeral-storage': '28413217573' }),
    pressure: () => ({ memory: false, disk: false, pid: false }),
    ...overrides,
  };
}
