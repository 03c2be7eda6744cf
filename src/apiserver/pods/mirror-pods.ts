// Keeps one mirror pod per static pod true, as the kubelet's tryReconcileMirrorPods and its orphan
// cleanup do: a missing mirror is created; one with another hash, or being deleted, is deleted
// (grace 0, UID precondition) and created again; one without a static pod is deleted. The mirror
// is never read back into what runs: the static pod stays the truth.
//
// Only a mirror that someone else was deleting is recreated after a pause, and the pause is not
// spent here: the caller is told when to come back, so the slot goes to other pods meanwhile. A
// mirror that does not exist (yet), or one we replace for its hash, is created at once.
import type { Pod } from 'kubernetes-types/core/v1';
import type { StaticPod } from '../../config/types.js';
import type { Logger } from '../../log/logger.js';
import { ApiError, isAlreadyExists, isConflict, isNotFound } from '../client/api-error.js';
import type { ApiClient } from '../client/client.js';
import type { MirrorPodCache } from './mirror-pod-cache.js';
import { isMirrorPod } from '../../k8s/annotations.js';
import { buildMirrorPod, isMirrorOf, podPath } from './mirror-pod.js';
import type { EventRecorder } from '../events/event-recorder.js';

/** Long enough for a deleting client to start watching, short enough to stay within a sync. */
export const RECREATE_AFTER_OUTSIDE_DELETE_MS = 1000;

/** What one pass over a key found. */
export interface MirrorPodSync {
  /** The valid mirror pod, when there is one now. */
  mirror?: Pod;
  /** Come back after this long: the mirror someone deleted is recreated then. */
  retryAfterMs?: number;
}

export class MirrorPodReconciler {
  /** Keys whose mirror someone else deleted: not created again before this time (ms since the epoch). */
  private readonly recreateNotBefore = new Map<string, number>();
  /** Keys an API pod holds, and its UID, once told. */
  private readonly nameTakenBy = new Map<string, string>();

  constructor(
    private readonly client: Pick<ApiClient, 'create' | 'get' | 'delete'>,
    private readonly cache: Pick<MirrorPodCache, 'hasSynced' | 'get' | 'observe' | 'forget'>,
    private readonly nodeName: string,
    private readonly nodeUid: () => string | undefined,
    /** The desired static pod under a key (namespace/name), if any. */
    private readonly desired: (key: string) => StaticPod | undefined,
    /** Whether the desired set is complete (all manifests read): only then is a mirror without a static pod an orphan. */
    private readonly desiredComplete: () => boolean,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
    /** Where the name-taken Warning goes. */
    private readonly events?: Pick<EventRecorder, 'event'>,
  ) {}

  /** Makes the mirror for `key` right: the valid mirror pod if there is one, and when to come back if it must wait. */
  async reconcile(key: string): Promise<MirrorPodSync> {
    if (!this.cache.hasSynced) return {}; // the first list tells us what exists
    const sp = this.desired(key);
    if (!sp) this.recreateNotBefore.delete(key);
    if (!sp) this.nameTakenBy.delete(key);
    let mirror = this.cache.get(key);
    if (mirror) {
      const orphan = !sp;
      if (orphan && !this.desiredComplete()) return {};
      const deleting = !!mirror.metadata?.deletionTimestamp;
      if (orphan || deleting || !isMirrorOf(mirror, sp)) {
        await this.deleteMirror(key, mirror, orphan ? 'orphaned' : deleting ? 'being deleted' : 'outdated');
        mirror = undefined;
        // Someone deleted it (`kubectl delete pod`): kubectl GETs it, then waits for the name's DELETED
        // event through a list+watch; a new mirror under the name before that list would make it wait
        // forever. We never set a deletionTimestamp ourselves (grace 0), so this is always someone else.
        if (deleting && sp) this.recreateNotBefore.set(key, this.now() + RECREATE_AFTER_OUTSIDE_DELETE_MS);
      }
    }
    if (!sp) return {};
    if (mirror) return { mirror };
    const wait = (this.recreateNotBefore.get(key) ?? 0) - this.now();
    if (wait > 0) return { retryAfterMs: wait };
    this.recreateNotBefore.delete(key);
    const uid = this.nodeUid();
    if (!uid) return {}; // kicked again once the Node is registered
    const body = buildMirrorPod(sp, this.nodeName, uid);
    try {
      const created = await this.client.create<Pod>(
        `/api/v1/namespaces/${encodeURIComponent(sp.pod.metadata.namespace)}/pods`,
        body,
      );
      this.logger.v(2).info('Created mirror pod', { pod: key, uid: created.metadata?.uid });
      this.cache.observe(created);
      return { mirror: created };
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      // Our cache was behind. Take what is there: valid, or deleted on the next pass.
      const existing = await this.client.get<Pod>(podPath(sp.pod.metadata.namespace, sp.pod.metadata.name));
      // An API pod bound here holds the name: it runs beside the static pod (pod-config.ts), and the
      // static pod has no mirror while it lasts, as with the kubelet, whose mirror create fails the
      // same way. It is never taken for a mirror (nor deleted as one).
      if (!isMirrorPod(existing)) throw this.nameTaken(key, sp, existing);
      this.cache.observe(existing);
      if (isMirrorOf(existing, sp) && !existing.metadata?.deletionTimestamp) return { mirror: existing };
      throw new ApiError(409, 'Conflict', `pod ${key} exists and is not the current mirror; replacing it`);
    }
  }

  /** Said once per holder: a warning naming both pods, and a Warning event on the API pod that holds the name. */
  private nameTaken(key: string, sp: StaticPod, holder: Pod): ApiError {
    const holderUid = holder.metadata?.uid ?? '';
    const message = `pod ${key} is an API pod (uid ${holderUid}), not a mirror pod: the static pod from ${sp.file} (uid ${sp.uid}) runs beside it and gets no mirror pod while the name is taken`;
    if (this.nameTakenBy.get(key) !== holderUid) {
      this.nameTakenBy.set(key, holderUid);
      this.logger.warn('Failed creating a mirror pod: an API pod has its name', {
        pod: key,
        staticPodUID: sp.uid,
        from: sp.file,
        apiPodUID: holderUid,
      });
      this.events?.event(
        { kind: 'Pod', namespace: sp.pod.metadata.namespace, name: sp.pod.metadata.name, uid: holderUid },
        'Warning',
        'FailedCreate',
        `Mirror pod of static pod ${sp.file} (uid ${sp.uid}) not created: this API pod has its name; both run on node ${this.nodeName}`,
      );
    }
    return new ApiError(409, 'AlreadyExists', message);
  }

  private async deleteMirror(key: string, mirror: Pod, why: string): Promise<void> {
    const [namespace, name] = [mirror.metadata?.namespace ?? '', mirror.metadata?.name ?? ''];
    const uid = mirror.metadata?.uid;
    this.logger.info('Deleting mirror pod', { pod: key, uid, reason: why });
    try {
      // UID precondition: never delete a newer mirror that someone (we) created under the same name.
      await this.client.delete(podPath(namespace, name), {
        gracePeriodSeconds: 0,
        preconditions: uid ? { uid } : undefined,
      });
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
    this.cache.forget(key, uid);
  }
}
