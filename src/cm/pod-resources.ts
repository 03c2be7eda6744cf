// The pod cgroup's limits from the pod's requests and limits, as the kubelet's ResourceConfigForPod
// computes them: the pod's requests and limits summed as the scheduler sums them
// (k8s/pod-resource-totals.ts), cpu.shares always, cfs quota and memory limit only when every container declares one.
import type { Pod } from 'kubernetes-types/core/v1';
import { qosClass } from '../k8s/qos.js';
import { podResourceTotals, type ResourceList } from '../k8s/pod-resource-totals.js';
import { CPU_PERIOD_US, MIN_CPU_SHARES, milliCpuToQuota, milliCpuToShares } from './cpu-shares.js';

/** What bootlet sets on a cgroup; an absent field is left as it is. */
export interface ResourceConfig {
  cpuShares?: number;
  /** Microseconds per period; -1 for no limit. */
  cpuQuota?: number;
  cpuPeriod?: number;
  /** Bytes. */
  memoryLimit?: number;
  /** -1 for no limit. */
  pidsLimit?: number;
}

export interface PodResourceOptions {
  /** cpuCFSQuota (default true): false leaves cpu limits unenforced (quota -1). */
  enforceCpuLimits: boolean;
  /** podPidsLimit; 0 or less sets nothing, as in the kubelet (-1 is its default). */
  podPidsLimit: number;
}

export function podRequests(pod: Pod): ResourceList {
  return podResourceTotals(pod, 'requests');
}

/** The pod's total cpu request in millicores, what the Burstable QoS cgroup's shares sum. */
export function podCpuRequestMilli(pod: Pod): number {
  return podRequests(pod).get('cpu')?.milliValue() ?? 0;
}

export function resourceConfigForPod(pod: Pod, opts: PodResourceOptions): ResourceConfig {
  const reqs = podRequests(pod);
  let cpuLimitsDeclared = true;
  let memoryLimitsDeclared = true;
  const limits = podResourceTotals(pod, 'limits', (r) => {
    if (r.get('cpu')?.isZero() !== false) cpuLimitsDeclared = false;
    if (r.get('memory')?.isZero() !== false) memoryLimitsDeclared = false;
  });
  const cpuShares = milliCpuToShares(reqs.get('cpu')?.milliValue() ?? 0);
  const cpuQuota = opts.enforceCpuLimits ? milliCpuToQuota(limits.get('cpu')?.milliValue() ?? 0, CPU_PERIOD_US) : -1;
  const memoryLimit = limits.get('memory')?.value() ?? 0;

  const out: ResourceConfig = {};
  switch (qosClass(pod)) {
    case 'Guaranteed':
      Object.assign(out, { cpuShares, cpuQuota, cpuPeriod: CPU_PERIOD_US, memoryLimit });
      break;
    case 'Burstable':
      out.cpuShares = cpuShares;
      if (cpuLimitsDeclared) Object.assign(out, { cpuQuota, cpuPeriod: CPU_PERIOD_US });
      if (memoryLimitsDeclared) out.memoryLimit = memoryLimit;
      break;
    case 'BestEffort':
      out.cpuShares = MIN_CPU_SHARES;
      break;
  }
  if (opts.podPidsLimit > 0) out.pidsLimit = opts.podPidsLimit;
  return out;
}
