// subPath bind mounts, as the kubelet makes them: the subPath is opened safely (safe-subpath.ts)
// and the open fd, /proc/<pid>/fd/<n>, is bind-mounted at
// <pod dir>/volume-subpaths/<volume>/<container>/<mount index>; that path goes to the CRI. The
// runtime mounts what the bind holds, so a component swapped for a symlink after the check
// cannot redirect it. A bind is reused across container restarts and removed with the pod.
import type { Stats } from 'node:fs';
import { lstat, mkdir, readdir, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bindMount, isMountPoint, unmount } from './mounter.js';
import { podSubPathTarget, podVolumeSubpathsDir } from './pod-dirs.js';
import { errnoOf, forChildProcess } from './proc-fd.js';
import { removeTreeOnOneMount } from './remove-tree.js';
import { openSubPath } from './safe-subpath.js';
import { PodCleanupError, SubPathError, VolumeError } from './volume-errors.js';
import { errorMessage } from '../util/error-message.js';

export interface SubPathRequest {
  rootDir: string;
  podUID: string;
  volumeName: string;
  containerName: string;
  /** The volumeMount's index in the container's volumeMounts. */
  mountIndex: number;
  /** The volume's directory on the host. */
  volumePath: string;
  subPath: string;
}

/** A bind at one place is undone at most this many times (binds stacked by earlier crashes). */
const MAX_STACKED_MOUNTS = 8;

function sameFile(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

async function mounted(target: string): Promise<boolean> {
  try {
    return await isMountPoint(target);
  } catch (err) {
    throw new PodCleanupError(
      `cannot tell whether ${target} is mounted: ${errnoOf(err) ?? errorMessage(err)}`,
      target,
      { cause: err },
    );
  }
}

async function unmountAll(target: string): Promise<void> {
  for (let i = 0; await mounted(target); i++) {
    if (i >= MAX_STACKED_MOUNTS)
      throw new PodCleanupError(`${target} is still mounted after ${MAX_STACKED_MOUNTS} unmounts`, target);
    try {
      await unmount(target);
    } catch (err) {
      throw new PodCleanupError(`cannot unmount ${target}: ${errorMessage(err)}`, target, { cause: err });
    }
  }
}

/** A file or a directory at `target`, matching what will be bound there. */
async function prepareTarget(target: string, directory: boolean): Promise<void> {
  await mkdir(path.dirname(target), { recursive: true, mode: 0o750 });
  let existing: Stats | undefined;
  try {
    existing = await lstat(target);
  } catch (err) {
    if (errnoOf(err) !== 'ENOENT') throw err;
  }
  if (existing && existing.isDirectory() !== directory) {
    // Left by an earlier bind of the other kind (the subPath changed type); it is not mounted.
    if (existing.isDirectory()) await rmdir(target);
    else await unlink(target);
    existing = undefined;
  }
  if (existing) return;
  // A file serves as the mount point for anything that is not a directory (file, socket, device).
  if (directory) await mkdir(target, 0o750);
  else await writeFile(target, '', { mode: 0o640, flag: 'wx' });
}

/**
 * Makes the subPath's bind and returns its path, the host path to give the CRI. Idempotent: an
 * existing bind of the same file is kept. Throws SubPathError when the subPath leads out of the
 * volume, VolumeError when the mount cannot be made.
 */
export async function bindSubPath(r: SubPathRequest): Promise<string> {
  const target = podSubPathTarget(r.rootDir, r.podUID, r.volumeName, r.containerName, r.mountIndex);
  const opened = await openSubPath(r.volumePath, r.subPath);
  try {
    if (await isMountPoint(target)) {
      if (sameFile(await stat(target), opened.stat)) return target;
      await unmountAll(target);
    }
    await prepareTarget(target, opened.stat.isDirectory());
    try {
      await bindMount(forChildProcess(opened.handle), target);
    } catch (err) {
      throw new VolumeError(`cannot bind subPath ${JSON.stringify(r.subPath)}: ${errorMessage(err)}`);
    }
    if (!sameFile(await stat(target), opened.stat)) {
      await unmountAll(target);
      throw new SubPathError(`subPath ${JSON.stringify(r.subPath)}: the bind does not show the opened file`);
    }
    return target;
  } finally {
    await opened.handle.close();
  }
}

/**
 * Unmounts every subPath bind of a pod and removes the volume-subpaths tree, before anything
 * removes the pod directory. Throws PodCleanupError when a bind does not go; call again later.
 */
export async function cleanSubPathMounts(rootDir: string, podUID: string): Promise<void> {
  const base = podVolumeSubpathsDir(rootDir, podUID);
  // Only real directories are listed: a symlink in this tree (bootlet's own) is never followed.
  const list = async (dir: string): Promise<string[]> => {
    try {
      if (!(await lstat(dir)).isDirectory()) return [];
      return (await readdir(dir)).map((n) => path.join(dir, n));
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return [];
      throw new PodCleanupError(`cannot read ${dir}: ${errnoOf(err) ?? errorMessage(err)}`, dir, { cause: err });
    }
  };
  // <volume>/<container>/<mount index>: each index is a mount point, or was one.
  for (const volumeDir of await list(base)) {
    for (const containerDir of await list(volumeDir)) {
      for (const target of await list(containerDir)) await unmountAll(target);
    }
  }
  await removeTreeOnOneMount(base);
}
