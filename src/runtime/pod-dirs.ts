// The per-pod directory tree under the agent's root dir, named as the kubelet names it so that
// tools that know /var/lib/kubelet/pods/<uid>/... find things where they expect.
import { rm } from 'node:fs/promises';
import path from 'node:path';

export function podDir(rootDir: string, uid: string): string {
  if (!uid || uid.includes('/') || uid === '.' || uid === '..') throw new Error(`invalid pod uid ${JSON.stringify(uid)}`);
  return path.join(rootDir, 'pods', uid);
}

export function podVolumeDir(rootDir: string, uid: string, pluginDir: string, volumeName: string): string {
  return path.join(podDir(rootDir, uid), 'volumes', pluginDir, volumeName);
}

export function podContainerDir(rootDir: string, uid: string, containerName: string): string {
  return path.join(podDir(rootDir, uid), 'containers', containerName);
}

export function podEtcHostsPath(rootDir: string, uid: string): string {
  return path.join(podDir(rootDir, uid), 'etc-hosts');
}

/**
 * Removes everything bootlet made for a pod. Nothing under it is ever mounted (emptyDir is a plain
 * directory, see volumes.ts), so a recursive remove cannot reach into another filesystem.
 */
export async function removePodDirs(rootDir: string, uid: string): Promise<void> {
  await rm(podDir(rootDir, uid), { recursive: true, force: true });
}
