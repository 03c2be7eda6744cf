// What admission knows of its node and what a refusal says. The facts are the ones the agent
// reports on its Node (labels as registered, allocatable = capacity minus reservations and the hard
// eviction thresholds), handed in through this narrow shape so admission reads no other part.
import type { Taint } from 'kubernetes-types/core/v1';

/** Resources in the scheduler's integer units: milli-cores, bytes, bytes, pods. */
export interface NodeResources {
  readonly milliCPU: number;
  readonly memory: number;
  readonly ephemeralStorage: number;
  readonly pods: number;
}

export interface NodeFacts {
  readonly name: string;
  /** The Node's labels (the kubelet's defaults and --node-labels). */
  readonly labels: Readonly<Record<string, string>>;
  readonly allocatable: NodeResources;
  readonly taints: readonly Taint[];
}

/** The kubelet's PodAdmitResult. */
export type AdmitResult = { readonly admit: true } | { readonly admit: false; readonly reason: string; readonly message: string };
