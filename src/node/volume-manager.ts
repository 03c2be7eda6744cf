// Keeps the mounted configMap, secret, projected and downwardAPI volumes of running pods current,
// as the kubelet's volume manager remounts them, but on the change itself: PodObjects says which
// pods a changed object (or renewed token) concerns, and their volumes are rewritten in place by
// the atomic writer, so a container reading the mount sees the new files at once (the kubelet
// waits for its next sync, up to a minute and more). A failed rewrite is logged once per pod and
// volume, retried with back-off, and never thrown out of here. A pod whose labels or annotations
// change (an API pod keeps its UID) has the volumes that project them rewritten the same way, as the
// kubelet's volume manager remounts a pod's downwardAPI volumes on its update.
import type { Volume } from 'kubernetes-types/core/v1';
import { nodeAllocatable, type NodeAllocatable } from '../k8s/node-allocatable.js';
import type { Logger } from '../log/logger.js';
import { Backoff, type BackoffPolicy } from '../util/backoff.js';
import { errorMessage } from '../util/error-message.js';
import { KeyedSerialRunner } from '../util/serial-runner.js';
import { objectVolumeKind, writeObjectVolume, type ObjectVolumePod } from './object-volumes.js';
import type { PodObjects } from './pod-objects.js';

/** A rewrite that failed: again after 1 s, doubling to 30 s. */
export const VOLUME_REWRITE_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 30_000, jitter: 0.2, resetAfterMs: 0 };

export interface VolumeManagerOptions {
  readonly podObjects: PodObjects;
  readonly logger: Logger;
  /** For limits.* of a downwardAPI resourceFieldRef a container does not set; default this node's (k8s/node-allocatable.ts). */
  readonly node?: NodeAllocatable;
  readonly backoff?: BackoffPolicy;
}

interface MountedVolume {
  volume: Volume;
  /** Set while the last rewrite failed: the error is logged once, then retried quietly. */
  failing?: string;
  backoff: Backoff;
  retry?: NodeJS.Timeout;
}

interface ManagedPod {
  pod: ObjectVolumePod;
  rootDir: string;
  volumes: Map<string, MountedVolume>;
}

export class VolumeManager {
  private readonly pods = new Map<string, ManagedPod>();
  /** Key `<uid>/<volume>`: changes that arrive during a rewrite make one more after it. */
  private readonly rewrites = new KeyedSerialRunner<string>((key) => this.rewrite(key));

  constructor(private readonly o: VolumeManagerOptions) {
    o.podObjects.onChange((uids) => {
      try {
        this.podsChanged(uids);
      } catch (err) {
        this.o.logger.error('Volume manager failed to take a change', { err: errorMessage(err) });
      }
    });
  }

  /** Sets up the volume for a container start (throws the FailedMount VolumeError) and keeps it current from then on. */
  async setUp(pod: ObjectVolumePod, v: Volume, rootDir: string): Promise<string> {
    const uid = pod.metadata.uid;
    let managed = this.pods.get(uid);
    if (!managed || managed.pod !== pod) {
      // Registered before reading, so a change while the first read is in flight is not missed.
      this.o.podObjects.registerPod(pod);
    }
    if (!managed) {
      managed = { pod, rootDir, volumes: new Map() };
      this.pods.set(uid, managed);
    }
    managed.pod = pod;
    const { dir } = await writeObjectVolume(pod, v, {
      rootDir,
      objects: this.o.podObjects,
      node: this.o.node ?? nodeAllocatable(undefined, rootDir),
    });
    const entry = managed.volumes.get(v.name);
    if (entry) entry.volume = v;
    // Still ours after the write: a pod forgotten meanwhile is not taken up again.
    else if (this.pods.get(uid) === managed)
      managed.volumes.set(v.name, { volume: v, backoff: new Backoff(this.o.backoff ?? VOLUME_REWRITE_BACKOFF) });
    return dir;
  }

  /**
   * The desired set has a new version of a pod under the same UID. Its set-up volumes are written
   * from it from now on; those that project its labels or annotations are rewritten now if they changed.
   */
  podUpdated(pod: ObjectVolumePod): void {
    const managed = this.pods.get(pod.metadata.uid);
    if (!managed || managed.pod === pod) return;
    const before = managed.pod.metadata;
    managed.pod = pod;
    if (sameMap(before.labels, pod.metadata.labels) && sameMap(before.annotations, pod.metadata.annotations)) return;
    for (const [name, entry] of managed.volumes)
      if (projectsPodMetadata(entry.volume)) this.rewrites.wake(`${pod.metadata.uid}/${name}`);
  }

  /** The pod is gone (its directory removed): no more rewrites, and PodObjects may stop watching for it. */
  forgetPod(uid: string): void {
    const managed = this.pods.get(uid);
    if (!managed) return;
    for (const v of managed.volumes.values()) clearTimeout(v.retry);
    this.pods.delete(uid);
    this.o.podObjects.unregisterPod(uid);
  }

  /** Resolves when no rewrite is running or queued (tests). */
  idle(): Promise<void> {
    return this.rewrites.idle();
  }

  private podsChanged(uids: readonly string[]): void {
    for (const uid of uids) {
      const managed = this.pods.get(uid);
      if (!managed) continue;
      for (const name of managed.volumes.keys()) this.rewrites.wake(`${uid}/${name}`);
    }
  }

  private async rewrite(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const uid = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const managed = this.pods.get(uid);
    const entry = managed?.volumes.get(name);
    if (!managed || !entry || !objectVolumeKind(entry.volume)) return;
    clearTimeout(entry.retry);
    entry.retry = undefined;
    const fields = { pod: `${managed.pod.metadata.namespace}/${managed.pod.metadata.name}`, podUID: uid, volume: name };
    try {
      const { changed } = await writeObjectVolume(managed.pod, entry.volume, {
        rootDir: managed.rootDir,
        objects: this.o.podObjects,
        node: this.o.node ?? nodeAllocatable(undefined, managed.rootDir),
        updateOnly: true,
      });
      if (entry.failing !== undefined) this.o.logger.info('Volume updated again after failures', fields);
      else if (changed) this.o.logger.v(2).info('Volume updated', fields);
      entry.failing = undefined;
      entry.backoff.reset();
    } catch (err) {
      const message = errorMessage(err);
      if (entry.failing === undefined)
        this.o.logger.warn('Volume update failed; retrying with back-off', { ...fields, err: message });
      entry.failing = message;
      if (this.pods.get(uid) !== managed) return;
      const delay = entry.backoff.next();
      entry.retry = setTimeout(() => this.rewrites.wake(key), delay);
      entry.retry.unref();
    }
  }
}

/** A downwardAPI volume, or a projected one with a downwardAPI source: its files follow the pod's metadata. */
function projectsPodMetadata(v: Volume): boolean {
  return v.downwardAPI !== undefined || (v.projected?.sources ?? []).some((s) => s.downwardAPI !== undefined);
}

function sameMap(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => b?.[k] === a?.[k] && Object.hasOwn(b ?? {}, k));
}

const managers = new WeakMap<PodObjects, VolumeManager>();

/** The one manager of a PodObjects (one onChange subscription however many callers). */
export function volumeManagerFor(podObjects: PodObjects, logger: Logger): VolumeManager {
  let m = managers.get(podObjects);
  if (!m) {
    m = new VolumeManager({ podObjects, logger });
    managers.set(podObjects, m);
  }
  return m;
}

/** The manager of a PodObjects if one was made. */
export function existingVolumeManager(podObjects: PodObjects): VolumeManager | undefined {
  return managers.get(podObjects);
}
