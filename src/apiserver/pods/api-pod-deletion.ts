// The end of a graceful deletion of an API pod, as the kubelet's status manager does it: once the
// pod's worker has stopped its containers and removed what it had (volumes, pod dir), the pod is
// deleted with grace 0 and a UID precondition, so the object goes and a pod recreated under the
// same name is never touched. Its terminal status is patched just before. Only pods that someone began deleting (deletionTimestamp) get it.
import type { StaticPod } from '../../config/types.js';
import { isConflict, isNotFound } from '../client/api-error.js';
import type { ApiClient } from '../client/client.js';
import { podPath } from './mirror-pod.js';

export class ApiPodFinalDelete {
  /** Pods being deleted whose worker has not finished yet, by UID. */
  private readonly deleting = new Map<string, { namespace: string; name: string }>();
  /** Worker finished, DELETE not yet accepted. */
  private readonly ready = new Set<string>();

  constructor(
    private readonly client: Pick<ApiClient, 'delete'>,
    /** Sends the pod's last status (its terminal one) first, so the object's end says how it ended. */
    private readonly beforeDelete: (uid: string) => Promise<void> = async () => undefined,
  ) {}

  /** The desired set let go of this API pod; it had a deletionTimestamp. */
  deletionStarted(sp: StaticPod): void {
    if (!sp.pod.metadata.deletionTimestamp) return;
    this.deleting.set(sp.uid, { namespace: sp.pod.metadata.namespace, name: sp.pod.metadata.name });
  }

  /** The pod's worker removed everything of it: returns true when a DELETE is now due. */
  podRemoved(uid: string): boolean {
    if (!this.deleting.has(uid)) return false;
    this.ready.add(uid);
    return true;
  }

  /** True once the object is gone (deleted now, or already). */
  async send(uid: string): Promise<boolean> {
    const pod = this.deleting.get(uid);
    if (!pod || !this.ready.has(uid)) return false;
    await this.beforeDelete(uid);
    try {
      await this.client.delete(podPath(pod.namespace, pod.name), { gracePeriodSeconds: 0, preconditions: { uid } });
    } catch (e) {
      // Already gone, or the name holds another pod now: nothing of ours is left to delete.
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
    this.deleting.delete(uid);
    this.ready.delete(uid);
    return true;
  }
}
