// Histogram buckets as the kubelet declares them (pkg/kubelet/metrics/metrics.go), so that
// dashboards computing quantiles from them read bootlet's histograms the same way.

/** Prometheus' DefBuckets (client_golang), used by most kubelet histograms. */
export const DEF_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** podStartupDurationBuckets: pod start histograms. */
export const POD_STARTUP_BUCKETS: readonly number[] = [
  0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600,
];

/** prometheus.ExponentialBuckets(start, factor, count). */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  const out: number[] = [];
  for (let i = 0, v = start; i < count; i++, v *= factor) out.push(v);
  return out;
}

/** kubelet_runtime_operations_duration_seconds: ExponentialBuckets(.005, 2.5, 14). */
export const RUNTIME_OPERATION_BUCKETS: readonly number[] = exponentialBuckets(0.005, 2.5, 14);
