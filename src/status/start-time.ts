// startTime: set once and never changed. For a pod this agent starts, the time it first saw the
// manifest (the kubernetes.io/config.seen annotation); for a pod it adopted from an earlier run,
// the creation of its oldest sandbox, which is when the pod really started.
import type { Pod, PodStatus } from 'kubernetes-types/core/v1';
import type { RuntimePod } from '../kuberuntime/runtime-pods.js';
import { apiTime } from '../util/api-time.js';
import { CONFIG_SEEN } from '../k8s/annotations.js';

export function podStartTime(
  pod: Pod,
  runtime: RuntimePod | undefined,
  previous: PodStatus | undefined,
  now: Date,
): string {
  if (previous?.startTime) return previous.startTime;
  const candidates: number[] = [];
  const seen = Date.parse(pod.metadata?.annotations?.[CONFIG_SEEN] ?? '');
  if (!Number.isNaN(seen)) candidates.push(seen);
  for (const s of runtime?.sandboxes ?? []) if (s.createdAt > 0) candidates.push(s.createdAt / 1e6);
  return apiTime(new Date(candidates.length > 0 ? Math.min(...candidates) : now.getTime()));
}
