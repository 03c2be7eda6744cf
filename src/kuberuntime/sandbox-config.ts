// PodSandboxConfig for RunPodSandbox (and CreateContainer / PullImage, which repeat it), built
// from the pod as the kubelet's generatePodSandboxConfig does.
import type { Pod } from 'kubernetes-types/core/v1';
import {
  Protocol,
  SecurityProfileType,
  type NamespaceOption,
  type PodSandboxConfig,
  type PortMapping,
} from '../cri/cri-types.js';
import { podDnsConfig, type ClusterDnsOptions } from './dns.js';
import type { LabelledPod } from '../k8s/pod.js';
import { sandboxAnnotations, sandboxLabels } from './labels.js';
import { namespacesForPod } from './namespaces.js';
import { podHostname } from './pod-hostname.js';
import { seLinuxOption, supplementalGroupsPolicyOf } from './security-context.js';
import { podLogDirectory } from '../node/pod-logs/layout.js';

export interface SandboxConfigOptions extends ClusterDnsOptions {
  /** kubelet podLogsDir, default /var/log/pods. */
  podLogsDir: string;
  /** 0 for the pod's first sandbox, +1 for each re-creation. */
  attempt: number;
  /** Content of the node's resolv.conf, read by the caller; undefined when there is none. */
  resolvConf?: string;
  /** The pod cgroup from src/cm, in the form the runtime's driver takes; '' leaves it to the runtime. */
  cgroupParent?: string;
  /** The pod's namespaces with its user namespace (pod-isolation.ts); default: namespacesForPod alone. */
  namespaceOptions?: NamespaceOption;
}

const PROTOCOLS: Record<string, Protocol> = { TCP: Protocol.TCP, UDP: Protocol.UDP, SCTP: Protocol.SCTP };

/**
 * Every port of every regular container (init containers' ports are not published), as
 * MakePortMappings: within one container a port whose name (or family/protocol/hostIP/ports key
 * when unnamed) repeats is dropped.
 */
export function podPortMappings(pod: Pod): PortMapping[] {
  const out: PortMapping[] = [];
  for (const c of pod.spec?.containers ?? []) {
    const seen = new Set<string>();
    for (const p of c.ports ?? []) {
      const protocol = p.protocol ?? 'TCP';
      const hostIp = p.hostIP ?? '';
      const family = hostIp === '' ? 'any' : hostIp.includes(':') ? 'v6' : 'v4';
      const key = p.name || `${family}-${protocol}-${hostIp}:${p.containerPort}:${p.hostPort ?? 0}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({
        protocol: PROTOCOLS[protocol] ?? Protocol.TCP,
        containerPort: p.containerPort,
        hostPort: p.hostPort ?? 0,
        hostIp,
      });
    }
  }
  return out;
}

export function hasPrivilegedContainer(pod: Pod): boolean {
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  return all.some((c) => c.securityContext?.privileged === true);
}

export function buildSandboxConfig(pod: LabelledPod, opts: SandboxConfigOptions): PodSandboxConfig {
  const sc = pod.spec?.securityContext;
  const supplementalGroups: number[] = [];
  if (sc?.fsGroup != null) supplementalGroups.push(sc.fsGroup);
  for (const g of sc?.supplementalGroups ?? []) supplementalGroups.push(g);
  const sysctls: Record<string, string> = {};
  for (const s of sc?.sysctls ?? []) sysctls[s.name] = s.value;

  return {
    metadata: {
      name: pod.metadata.name,
      uid: pod.metadata.uid,
      namespace: pod.metadata.namespace,
      attempt: opts.attempt,
    },
    hostname: pod.spec?.hostNetwork ? '' : podHostname(pod, opts.clusterDomain),
    logDirectory: podLogDirectory(opts.podLogsDir, pod),
    dnsConfig: podDnsConfig(pod, opts.resolvConf, opts),
    portMappings: podPortMappings(pod),
    labels: sandboxLabels(pod),
    annotations: sandboxAnnotations(pod),
    linux: {
      cgroupParent: opts.cgroupParent ?? '',
      sysctls,
      securityContext: {
        namespaceOptions: opts.namespaceOptions ?? namespacesForPod(pod),
        privileged: hasPrivilegedContainer(pod),
        // As the kubelet: the sandbox (pause) always runs RuntimeDefault, whatever the pod asks;
        // the pod's profile applies to its containers (kubernetes#84623).
        seccomp: { profileType: SecurityProfileType.RuntimeDefault, localhostRef: '' },
        ...(sc?.runAsUser != null ? { runAsUser: { value: sc.runAsUser } } : {}),
        ...(sc?.runAsGroup != null ? { runAsGroup: { value: sc.runAsGroup } } : {}),
        supplementalGroups,
        supplementalGroupsPolicy: supplementalGroupsPolicyOf(pod),
        ...(sc?.seLinuxOptions ? { selinuxOptions: seLinuxOption(sc.seLinuxOptions) } : {}),
      },
    },
  };
}
