// What the API server held for each pod when this agent first saw it (a static pod's mirror, an API
// pod's listed status): what was reported before the agent started. Kept once per pod and read by
// the status manager (readiness and transition times of what was found running) and the prober (a
// startup probe that had passed is not run again): the kubelet of 1.35 with
// ChangeContainerStatusOnKubeletRestart off (KEP-4781).
import type { PodStatus } from 'kubernetes-types/core/v1';
import { runtimeId } from '../k8s/container-id.js';

export class ReportedStatuses {
  private readonly byUid = new Map<string, PodStatus>();

  has(uid: string): boolean {
    return this.byUid.has(uid);
  }

  get(uid: string): PodStatus | undefined {
    return this.byUid.get(uid);
  }

  /** Only the first report of a pod is kept; false when one was already. */
  keep(uid: string, status: PodStatus): boolean {
    if (this.byUid.has(uid)) return false;
    this.byUid.set(uid, status);
    return true;
  }

  forget(uid: string): void {
    this.byUid.delete(uid);
  }

  /** Whether this very container (its CRI ID) was reported started. */
  containerStarted(uid: string, containerName: string, containerId: string): boolean {
    const status = this.byUid.get(uid);
    const all = [...(status?.initContainerStatuses ?? []), ...(status?.containerStatuses ?? [])];
    const c = all.find((s) => s.name === containerName);
    return c?.started === true && runtimeId(c.containerID) === containerId;
  }
}
