// Sends each static pod's locally computed status to its mirror pod's status subresource, only when
// it differs from what the server has (as last seen through the watch or our own write). A mirror
// that is missing or not current is the mirror reconciler's job; this waits for it.
import type { Pod } from 'kubernetes-types/core/v1';
import { ApiError, isConflict, isNotFound } from '../client/api-error.js';
import type { ApiClient } from '../client/client.js';
import type { MirrorPodCache } from './mirror-pod-cache.js';
import { podPath } from './mirror-pod.js';
import { podStatusPatch } from './pod-status-diff.js';
import { stableJson } from '../../util/stable-json.js';
import type { StaticPod } from '../../config/types.js';
import type { PodStatusSource } from '../pod-sources.js';

export class PodStatusSync {
  /**
   * The last patch that succeeded, by mirror UID. Sending the very same patch again could only loop
   * (a server that stores a field in another form than we send it): skip it.
   */
  private readonly lastPatch = new Map<string, string>();

  constructor(
    private readonly client: ApiClient,
    private readonly cache: MirrorPodCache,
    private readonly statuses: PodStatusSource,
  ) {}

  /** Drops what is remembered of mirrors no longer current (bounded by the number of static pods). */
  retain(mirrorUids: Set<string>): void {
    for (const uid of this.lastPatch.keys()) if (!mirrorUids.has(uid)) this.lastPatch.delete(uid);
  }

  /** Brings the mirror's status in line; `mirror` is the valid mirror pod of `sp`. */
  async sync(sp: StaticPod, mirror: Pod): Promise<void> {
    // A restarted agent's first sight of the mirror: what it shows is what was reported before.
    await this.statuses.reported?.(sp.uid, mirror.status);
    const ours = this.statuses.get(sp.uid);
    if (!ours) return;
    const { namespace, name } = sp.pod.metadata;
    let current = mirror;
    // One re-read on a conflict, then give up until the next change or resync: never a hot loop.
    for (let attempt = 0; attempt < 2; attempt++) {
      const uid = current.metadata?.uid;
      if (!uid) return;
      const patch = podStatusPatch(current.status, ours, uid);
      if (!patch) return;
      const text = stableJson(patch);
      if (this.lastPatch.get(uid) === text) return;
      try {
        const updated = await this.client.patch<Pod>(`${podPath(namespace, name)}/status`, 'strategic', patch);
        this.lastPatch.set(uid, text);
        this.cache.observe(updated);
        return;
      } catch (e) {
        if (isNotFound(e)) {
          this.cache.forget(`${namespace}/${name}`, uid); // gone: the reconciler creates it again
          throw new ApiError(404, 'NotFound', `mirror pod ${namespace}/${name} is gone; it will be recreated`);
        }
        // 409, or 422 for a uid that is not the object's: our copy is stale. Read it back.
        if (!isConflict(e) && !(e instanceof ApiError && e.code === 422)) throw e;
        current = await this.client.get<Pod>(podPath(namespace, name));
        this.cache.observe(current);
        if (current.metadata?.uid !== uid) return; // recreated under us: the next pass handles the new one
      }
    }
  }
}
