// How long static pods take to start, as the kubelet measures it: from the first time the agent
// saw the pod (its kubernetes.io/config.seen) to its status first saying Running
// (kubelet_pod_start_duration_seconds), and to all its containers first running, less the time
// spent pulling images (kubelet_pod_start_sli_duration_seconds, the pod startup latency SLI). A
// pod already running when first seen (adopted after a restart of the agent) is not counted.
import type { PodStatus } from 'kubernetes-types/core/v1';
import { CONFIG_SEEN } from '../k8s/annotations.js';
import type { PodStatusEntry } from '../status/status-manager.js';

export interface PodStartSink {
  podStarted(seconds: number): void;
  podStartedSli(seconds: number, firstWithNetwork: boolean): void;
}

interface Tracked {
  readonly seenMs: number;
  readonly hostNetwork: boolean;
  running: boolean;
  sliDone: boolean;
  firstPullStartMs?: number;
  lastPullEndMs?: number;
}

function allContainersStarted(s: PodStatus): boolean {
  const cs = s.containerStatuses ?? [];
  return cs.length > 0 && cs.every((c) => c.state?.running?.startedAt !== undefined);
}

export class PodStartTracker {
  private readonly pods = new Map<string, Tracked | 'adopted'>();
  private firstNetworkPodSeen = false;

  constructor(
    private readonly sink: PodStartSink,
    private readonly now: () => number = Date.now,
  ) {}

  /** A pod's image was pulled before one of its containers started. */
  pulled(uid: string, pullMs: number, pulledAtMs: number): void {
    const t = this.pods.get(uid);
    if (t === undefined || t === 'adopted') return;
    const start = pulledAtMs - pullMs;
    t.firstPullStartMs = t.firstPullStartMs === undefined ? start : Math.min(t.firstPullStartMs, start);
    t.lastPullEndMs = Math.max(t.lastPullEndMs ?? pulledAtMs, pulledAtMs);
  }

  /** A new status of a pod (StatusManager.onChange); undefined when the pod is gone. */
  statusChanged(uid: string, entry: PodStatusEntry | undefined): void {
    if (!entry) {
      this.pods.delete(uid);
      return;
    }
    let t = this.pods.get(uid);
    if (t === undefined) {
      if (entry.status.phase === 'Running') {
        this.pods.set(uid, 'adopted');
        return;
      }
      const seen = Date.parse(entry.pod.metadata.annotations[CONFIG_SEEN] ?? '');
      t = {
        seenMs: Number.isFinite(seen) ? seen : this.now(),
        hostNetwork: entry.pod.spec?.hostNetwork === true,
        running: false,
        sliDone: false,
      };
      this.pods.set(uid, t);
    }
    if (t === 'adopted') return;
    const elapsedMs = this.now() - t.seenMs;
    if (!t.running && entry.status.phase === 'Running') {
      t.running = true;
      this.sink.podStarted(Math.max(0, elapsedMs) / 1000);
    }
    if (!t.sliDone && allContainersStarted(entry.status)) {
      t.sliDone = true;
      const pulling =
        t.firstPullStartMs !== undefined && t.lastPullEndMs !== undefined ? t.lastPullEndMs - t.firstPullStartMs : 0;
      const firstWithNetwork = !t.hostNetwork && !this.firstNetworkPodSeen;
      if (firstWithNetwork) this.firstNetworkPodSeen = true;
      this.sink.podStartedSli(Math.max(0, elapsedMs - pulling) / 1000, firstWithNetwork);
    }
  }
}
