// CPU requests and limits as cgroup values, with the kubelet's formulas (cm/helpers_linux.go): shares
// from the request (1024 a core, at least 2), CFS quota from the limit over a 100 ms period. The pod and
// QoS cgroups here and each container's CRI resources (kuberuntime/resources.ts) use them.

export const MIN_CPU_SHARES = 2;
export const MAX_CPU_SHARES = 262144;
/** CFS period in microseconds (cpuCFSQuotaPeriod default 100ms). */
export const CPU_PERIOD_US = 100000;
/** Smallest quota the kernel accepts, in microseconds. */
export const MIN_CPU_QUOTA_US = 1000;

export function milliCpuToShares(milli: number): number {
  if (milli === 0) return MIN_CPU_SHARES;
  const shares = Math.floor((milli * 1024) / 1000);
  return Math.min(MAX_CPU_SHARES, Math.max(MIN_CPU_SHARES, shares));
}

export function milliCpuToQuota(milli: number, periodUs: number): number {
  if (milli === 0) return 0;
  return Math.max(MIN_CPU_QUOTA_US, Math.floor((milli * periodUs) / 1000));
}

/** The cpu request a container's shares stand for (the kubelet's sharesToMilliCPU: rounded up). */
export function sharesToMilliCpu(shares: number): number {
  return shares >= MIN_CPU_SHARES ? Math.ceil((shares * 1000) / 1024) : 0;
}

/** The cpu limit a CFS quota stands for (quotaToMilliCPU); none (0) for an unlimited quota. */
export function quotaToMilliCpu(quotaUs: number, periodUs: number): number {
  if (quotaUs <= 0 || periodUs <= 0) return 0;
  return Math.floor((quotaUs * 1000) / periodUs);
}
