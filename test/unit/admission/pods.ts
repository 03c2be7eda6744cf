import type { Container, Pod } from 'kubernetes-types/core/v1';
import type { NodeFacts } from '../../../src/admission/node-facts.js';
import { sysctlAllowlist } from '../../../src/admission/sysctls.js';
import type { StaticPod } from '../../../src/config/types.js';
import { safeSysctls } from '../../../src/k8s/sysctls.js';

export const GiB = 1024 ** 3;

export function node(over: Partial<NodeFacts> = {}): NodeFacts {
  return {
    name: 'n1',
    labels: { 'kubernetes.io/hostname': 'n1', 'kubernetes.io/os': 'linux', disk: 'ssd' },
    allocatable: { milliCPU: 2000, memory: 4 * GiB, ephemeralStorage: 10 * GiB, pods: 110 },
    taints: [],
    pressure: [],
    sysctls: sysctlAllowlist(safeSysctls('6.1.0')),
    shuttingDown: false,
    appArmor: {},
    features: { runtimeVersion: 'containerd://1.6.20', runtimeHandlers: [] },
    ...over,
  };
}

/** An API pod (not critical) unless `static` is set. */
export function pod(
  name: string,
  opts: {
    requests?: Record<string, string>;
    limits?: Record<string, string>;
    static?: boolean;
    spec?: Partial<Pod['spec']>;
    containers?: Container[];
    seen?: string;
  } = {},
): Pod {
  const annotations: Record<string, string> = opts.static ? { 'kubernetes.io/config.source': 'file' } : {};
  if (opts.seen) annotations['kubernetes.io/config.seen'] = opts.seen;
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}`, annotations },
    spec: {
      containers: opts.containers ?? [
        { name: 'c', image: 'i', resources: { requests: opts.requests, limits: opts.limits } },
      ],
      ...opts.spec,
    },
  };
}

export function staticPod(name: string, opts: Parameters<typeof pod>[1] = {}): StaticPod {
  const p = pod(name, { static: true, ...opts }) as StaticPod['pod'];
  return { pod: p, uid: p.metadata.uid, key: `default/${name}`, file: `/m/${name}.yaml` };
}
