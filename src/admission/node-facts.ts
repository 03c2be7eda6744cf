// What admission knows of its node and what a refusal says. The facts are the ones the agent
// reports on its Node (labels as registered, allocatable = capacity minus reservations and the hard
// eviction thresholds, the pressure conditions), and the node's settings admission reads (the sysctl
// allowlist), handed in through this narrow shape so admission reads no other part.
import type { Taint } from 'kubernetes-types/core/v1';
import type { SysctlAllowlist } from './sysctls.js';
import type { AppArmorHost } from '../node/apparmor-host.js';
import type { ImageVolumeSupport } from '../node/image-volume-support.js';

/** Resources in the scheduler's integer units: milli-cores, bytes, bytes, pods. */
export interface NodeResources {
  readonly milliCPU: number;
  readonly memory: number;
  readonly ephemeralStorage: number;
  readonly pods: number;
}

/**
 * The eviction manager's node conditions the default hard thresholds can raise (memory.available,
 * nodefs.available). PIDPressure is not one: the kubelet has no default pid threshold.
 */
export type PressureCondition = 'MemoryPressure' | 'DiskPressure';

export interface NodeFacts {
  readonly name: string;
  /** The Node's labels (the kubelet's defaults and --node-labels). */
  readonly labels: Readonly<Record<string, string>>;
  readonly allocatable: NodeResources;
  readonly taints: readonly Taint[];
  /** The pressure conditions the Node reports now, MemoryPressure first. */
  readonly pressure: readonly PressureCondition[];
  /** The safe sysctls and allowedUnsafeSysctls. */
  readonly sysctls: SysctlAllowlist;
  /** A graceful node shutdown is under way. */
  readonly shuttingDown: boolean;
  /** Whether the host can enforce AppArmor, read at start. */
  readonly appArmor: AppArmorHost;
  /** What the runtime does of image volumes (node/image-volume-support.ts); absent, nothing. */
  readonly imageVolumes?: ImageVolumeSupport;
}

/** The kubelet's PodAdmitResult. */
export type AdmitResult =
  { readonly admit: true } | { readonly admit: false; readonly reason: string; readonly message: string };
