// The status manager's part for API pods (pkg/kubelet/status/status_manager.go): each API pod's
// locally computed status is patched onto the pod's own status subresource (no mirror), with
// `metadata.uid` in the patch as the precondition, so it can never land on a pod recreated under
// the same name. A terminal phase (Succeeded, Failed) never goes back: a later non-terminal status
// of ours is not sent, as the kubelet's checkPodStatus/mergePodStatus refuse it.
import type { Pod, PodStatus } from 'kubernetes-types/core/v1';
import type { StaticPod } from '../../config/types.js';
import { isTerminalPhase } from '../../k8s/pod-phase.js';
import { isConflict, isNotFound } from '../client/api-error.js';
import type { ApiClient } from '../client/client.js';
import { podPath } from './mirror-pod.js';
import { stableJson } from '../../util/stable-json.js';
import { podStatusPatch } from './pod-status-diff.js';
import type { ApiPodView, PodStatusSource } from '../pod-sources.js';

export class ApiPodStatusSync {
  /**
   * Pods being deleted that the desired set let go of, with the last status computed for them: the
   * terminal one is patched before the final DELETE (the kubelet's canBeDeleted wants it there).
   */
  private readonly leaving = new Map<string, { sp: StaticPod; status?: PodStatus }>();
  /** What the server holds as far as we know (the listed status, then each patch's answer), by UID. */
  private readonly server = new Map<string, PodStatus>();
  /** The last patch that succeeded, by UID: the same patch again could only loop (a field the server stores in another form). */
  private readonly lastPatch = new Map<string, string>();

  constructor(
    private readonly client: Pick<ApiClient, 'patch'>,
    private readonly statuses: PodStatusSource,
    private readonly pods: ApiPodView,
  ) {}

  /** The set let go of a pod being deleted: its statuses are still sent until its final DELETE. */
  deletionStarted(sp: StaticPod): void {
    if (sp.pod.metadata.deletionTimestamp) this.leaving.set(sp.uid, { sp, status: this.statuses.get(sp.uid) });
  }

  /** A pod being deleted whose status changed; the status is kept for after the status manager forgot the pod. */
  isLeaving(uid: string): boolean {
    const l = this.leaving.get(uid);
    const now = this.statuses.get(uid);
    if (l && now) l.status = now;
    return l !== undefined;
  }

  /** After the final DELETE: nothing more to send. */
  deleted(uid: string): void {
    this.leaving.delete(uid);
  }

  /** Forgets the pods that are no longer desired (bounded by the API pods on the node). */
  retain(): void {
    const known = (uid: string): boolean => this.pods.apiPodByUid(uid) !== undefined || this.leaving.has(uid);
    for (const uid of this.server.keys()) if (!known(uid)) this.server.delete(uid);
    for (const uid of this.lastPatch.keys()) if (!known(uid)) this.lastPatch.delete(uid);
  }

  async sync(uid: string): Promise<void> {
    const leaving = this.leaving.get(uid);
    const sp = this.pods.apiPodByUid(uid) ?? leaving?.sp;
    const ours = this.statuses.get(uid) ?? leaving?.status;
    if (leaving && ours) leaving.status = ours;
    if (!sp || !ours) return;
    const known = this.server.get(uid) ?? sp.pod.status;
    if (isTerminalPhase(known?.phase) && ours.phase !== known?.phase) return;
    const patch = podStatusPatch(known, ours, uid);
    if (!patch) return;
    const text = stableJson(patch);
    if (this.lastPatch.get(uid) === text) return;
    const { namespace, name } = sp.pod.metadata;
    try {
      const updated = await this.client.patch<Pod>(`${podPath(namespace, name)}/status`, 'strategic', patch);
      this.lastPatch.set(uid, text);
      if (updated.status) this.server.set(uid, updated.status);
    } catch (e) {
      // Gone, or the name now holds another pod (the UID precondition failed): the source's watch
      // tells the set, and the worker stops it; nothing to retry here.
      if (
        isNotFound(e) ||
        isConflict(e) ||
        (typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 422)
      )
        return;
      throw e;
    }
  }
}
