// Setting up (and, on a change, rewriting) the volumes whose content comes from API objects or the
// pod itself: configMap, secret, projected, downwardAPI. Each is a directory under the pod's
// volumes/<plugin>/ written with the atomic writer; a secret, and a projected volume that holds a
// token or a secret, sit on a tmpfs mounted on that directory so they never touch the disk.
import type { Volume } from 'kubernetes-types/core/v1';
import { chmod, lstat, mkdir } from 'node:fs/promises';
import type { NodeAllocatable } from '../k8s/node-allocatable.js';
import { writeAtomically } from './atomic-writer.js';
import { isMountPoint } from './mounter.js';
import type { PodObjects } from './pod-objects.js';
import { podVolumeDir } from './pod-dirs.js';
import { ensureTmpfs } from './tmpfs-volumes.js';
import {
  configMapPayload,
  DEFAULT_VOLUME_MODE,
  downwardApiPayload,
  projectedPayload,
  secretPayload,
  VolumeSourceUnavailableError,
  type MutablePayload,
  type PayloadContext,
} from './volume-payloads.js';
import { setVolumeOwnership } from './volume-ownership.js';
import { VolumeError } from './volume-errors.js';
import { errorMessage } from '../util/error-message.js';

export type ObjectVolumeKind = 'configMap' | 'secret' | 'projected' | 'downwardAPI';

/** The kubelet's plugin directory names. */
export const OBJECT_VOLUME_PLUGIN_DIRS: Readonly<Record<ObjectVolumeKind, string>> = {
  configMap: 'kubernetes.io~configmap',
  secret: 'kubernetes.io~secret',
  projected: 'kubernetes.io~projected',
  downwardAPI: 'kubernetes.io~downward-api',
};

export function objectVolumeKind(v: Volume): ObjectVolumeKind | undefined {
  if (v.configMap) return 'configMap';
  if (v.secret) return 'secret';
  if (v.projected) return 'projected';
  if (v.downwardAPI) return 'downwardAPI';
  return undefined;
}

/** Whether the volume holds a credential and so goes on a tmpfs. */
export function isMemoryBacked(v: Volume): boolean {
  return (
    v.secret !== undefined ||
    (v.projected?.sources ?? []).some((s) => s.secret !== undefined || s.serviceAccountToken !== undefined)
  );
}

/** The pod as these volumes need it: identified, with its spec. */
export type ObjectVolumePod = PayloadContext['pod'];

export interface ObjectVolumeContext {
  readonly rootDir: string;
  readonly objects: PodObjects | undefined;
  readonly node: NodeAllocatable;
  /**
   * An update of a volume set up before: nothing is made. A directory that is gone, or a
   * memory-backed one whose tmpfs is gone (the pod being cleaned up), is left alone, so a
   * credential never lands on the disk below.
   */
  readonly updateOnly?: boolean;
}

/** One write at a time per volume directory: the atomic writer is not safe against itself. */
const writing = new Map<string, Promise<unknown>>();

function serialized<T>(dir: string, job: () => Promise<T>): Promise<T> {
  const before = writing.get(dir) ?? Promise.resolve();
  const run = before.then(job, job);
  const settled = run.catch(() => undefined);
  writing.set(dir, settled);
  void settled.then(() => {
    if (writing.get(dir) === settled) writing.delete(dir);
  });
  return run;
}

/** Resolves when no write is in flight into a volume under `podDir` (before the pod's volumes go away). */
export async function objectVolumeWritesSettled(podDir: string): Promise<void> {
  const prefix = `${podDir}/`;
  await Promise.all([...writing].filter(([dir]) => dir.startsWith(prefix)).map(([, p]) => p));
}

async function payloadOf(kind: ObjectVolumeKind, v: Volume, ctx: PayloadContext): Promise<MutablePayload> {
  switch (kind) {
    case 'configMap':
      return configMapPayload(ctx, v.configMap!);
    case 'secret':
      return secretPayload(ctx, v.secret!.secretName ?? '', v.secret!, v.secret!.defaultMode ?? DEFAULT_VOLUME_MODE);
    case 'downwardAPI':
      return downwardApiPayload(ctx, v.downwardAPI!.items, v.downwardAPI!.defaultMode ?? DEFAULT_VOLUME_MODE);
    case 'projected':
      return projectedPayload(ctx, v.projected!);
  }
}

export interface ObjectVolumeResult {
  readonly dir: string;
  /** Whether new content went live (false: it was already there). */
  readonly changed: boolean;
}

/**
 * Makes the volume directory (and its tmpfs) and writes the current content. Throws VolumeError
 * with the kubelet's FailedMount text (VolumeSourceUnavailableError when the object cannot be read yet).
 */
export async function writeObjectVolume(
  pod: ObjectVolumePod,
  v: Volume,
  ctx: ObjectVolumeContext,
): Promise<ObjectVolumeResult> {
  const kind = objectVolumeKind(v);
  if (!kind)
    throw new VolumeError(
      `volume ${JSON.stringify(v.name)} is not a configMap, secret, projected or downwardAPI volume`,
    );
  const dir = podVolumeDir(ctx.rootDir, pod.metadata.uid, OBJECT_VOLUME_PLUGIN_DIRS[kind], v.name);
  const fsGroup = pod.spec?.securityContext?.fsGroup ?? undefined;
  return serialized(dir, async () => {
    try {
      const payload = await payloadOf(kind, v, { pod, objects: ctx.objects, node: ctx.node, fsGroup });
      if (ctx.updateOnly) {
        const present = isMemoryBacked(v)
          ? await isMountPoint(dir)
          : (await lstat(dir).catch(() => undefined))?.isDirectory() === true;
        if (!present) return { dir, changed: false };
        return {
          dir,
          changed: await writeAtomically(dir, payload, { setPerms: () => setVolumeOwnership(dir, fsGroup, true) }),
        };
      }
      await mkdir(dir, { recursive: true, mode: 0o750 });
      if (isMemoryBacked(v)) {
        await ensureTmpfs(dir);
      } else {
        // As the kubelet's emptyDir under it; the container mounts it read-only anyway. The
        // setgid bit fsGroup ownership gave it stays.
        const st = await lstat(dir);
        if ((st.mode & 0o777) !== 0o777) await chmod(dir, (st.mode & 0o7000) | 0o777);
      }
      // The kubelet treats these volumes as read-only: group read, never group write.
      const changed = await writeAtomically(dir, payload, { setPerms: () => setVolumeOwnership(dir, fsGroup, true) });
      return { dir, changed };
    } catch (err) {
      const why = `MountVolume.SetUp failed for volume ${JSON.stringify(v.name)} : ${errorMessage(err)}`;
      if (err instanceof VolumeSourceUnavailableError) throw new VolumeSourceUnavailableError(why, { cause: err });
      throw new VolumeError(why, { cause: err });
    }
  });
}
