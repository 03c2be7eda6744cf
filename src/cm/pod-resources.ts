// The pod cgroup's limits from the pod's requests and limits, as the kubelet's ResourceConfigForPod
// computes them: the pod's requests and limits are summed as the scheduler sums them (regular
// containers and sidecars add up, a plain init container counts while it runs alone, overhead is
// added), cpu.shares always, cfs quota and memory limit only when every container declares one.
import type { Pod } from 'kubernetes-types/core/v1';
import { qosClass } from '../k8s/qos.js';
import { parseQuantity, Quantity } from '../k8s/quantity.js';
import { isRestartableInit } from '../k8s/restart.js';
import { CPU_PERIOD_US, MIN_CPU_SHARES, milliCpuToQuota, milliCpuToShares } from '../kuberuntime/resources.js';

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

type ResourceList = Map<string, Quantity>;

function list(src: Record<string, string | number> | undefined): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of Object.entries(src ?? {})) out.set(k, parseQuantity(v));
  return out;
}

function add(into: ResourceList, from: ResourceList): void {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? Quantity.zero()).plus(v));
}

function max(into: ResourceList, from: ResourceList): void {
  for (const [k, v] of from) {
    const cur = into.get(k);
    if (!cur || v.cmp(cur) > 0) into.set(k, v);
  }
}

/**
 * Sums one side (requests or limits) of the pod's containers, calling `each` with what every
 * container effectively needs (an init container together with the sidecars started before it).
 */
function aggregate(pod: Pod, side: 'requests' | 'limits', each?: (r: ResourceList) => void): ResourceList {
  const total: ResourceList = new Map();
  for (const c of pod.spec?.containers ?? []) {
    const r = list(c.resources?.[side]);
    each?.(r);
    add(total, r);
  }
  const sidecars: ResourceList = new Map();
  const initPeak: ResourceList = new Map();
  for (const c of pod.spec?.initContainers ?? []) {
    const own = list(c.resources?.[side]);
    let effective: ResourceList;
    if (isRestartableInit(c)) {
      add(total, own);
      add(sidecars, own);
      effective = sidecars;
    } else {
      effective = new Map(own);
      add(effective, sidecars);
    }
    each?.(effective);
    max(initPeak, effective);
  }
  max(total, initPeak);
  const overhead = list(pod.spec?.overhead);
  if (side === 'requests') add(total, overhead);
  else for (const [k, v] of overhead) if (total.get(k)?.isZero() === false) total.set(k, total.get(k)!.plus(v));
  return total;
}

export function podRequests(pod: Pod): ResourceList {
  return aggregate(pod, 'requests');
}

/** The pod's total cpu request in millicores, what the Burstable QoS cgroup's shares sum. */
export function podCpuRequestMilli(pod: Pod): number {
  return podRequests(pod).get('cpu')?.milliValue() ?? 0;
}

export function resourceConfigForPod(pod: Pod, opts: PodResourceOptions): ResourceConfig {
  const reqs = podRequests(pod);
  let cpuLimitsDeclared = true;
  let memoryLimitsDeclared = true;
  const limits = aggregate(pod, 'limits', (r) => {
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
