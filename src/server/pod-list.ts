// The /pods answer: a v1 PodList of the static pods this agent runs, under their suffixed names
// and UIDs, each with its current status instead of the manifest's (as the kubelet since #57106).
import type { Pod, PodList } from 'kubernetes-types/core/v1';
import { apiTime } from '../status/time.js';
import type { PodStatusEntry } from '../status/status-manager.js';

function podWithStatus(e: PodStatusEntry): Pod {
  const pod: Pod = { ...e.pod, metadata: { ...e.pod.metadata }, status: e.status };
  if (e.terminatingSince) {
    // A static pod has no API deletion; marking the one being stopped lets every pod printer
    // (ours, kubectl on a saved list) say Terminating, as it would for a deleted mirror pod.
    pod.metadata!.deletionTimestamp = apiTime(e.terminatingSince);
    pod.metadata!.deletionGracePeriodSeconds = e.pod.spec?.terminationGracePeriodSeconds ?? 30;
  }
  return pod;
}

export function podList(entries: readonly PodStatusEntry[]): PodList {
  return { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: entries.map(podWithStatus) };
}
