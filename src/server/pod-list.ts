// The /pods answer: a v1 PodList of the static pods this agent runs, under their suffixed names
// and UIDs, each with its current status instead of the manifest's (as the kubelet since #57106).
import type { Pod, PodList } from 'kubernetes-types/core/v1';
import { apiTime } from '../util/api-time.js';
import { DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS } from '../k8s/defaults.js';
import type { PodStatusEntry } from '../status/status-manager.js';

function podWithStatus(e: PodStatusEntry): Pod {
  // A static pod has no API deletion; marking the one being stopped lets every pod printer
  // (ours, kubectl on a saved list) say Terminating, as it would for a deleted mirror pod.
  const deletion = e.terminatingSince
    ? {
        deletionTimestamp: apiTime(e.terminatingSince),
        deletionGracePeriodSeconds:
          e.pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS,
      }
    : {};
  return { ...e.pod, metadata: { ...e.pod.metadata, ...deletion }, status: e.status };
}

export function podList(entries: readonly PodStatusEntry[]): PodList {
  return { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: entries.map(podWithStatus) };
}
