// The per-pod directory tree under the agent's root dir, named as the kubelet names it so that
// tools that know /var/lib/kubelet/pods/<uid>/... find things where they expect. Every name
// that goes into a path (pod uid, volume and container names, from a manifest or read back from
// runtime labels) is checked here first: a name that is not what validation allows is refused.
import path from 'node:path';
import { UnsafePathComponentError } from './volume-errors.js';

/** A pod UID: at most 36 characters of [0-9A-Za-z-] (a UUID, or the config hash of a static pod). */
const POD_UID = /^[0-9A-Za-z-]{1,36}$/;
/** RFC 1123 label, as the API server requires of volume and container names and namespaces. */
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** Volume plugin directories, such as kubernetes.io~empty-dir. */
const PLUGIN_DIR = /^[a-z0-9.-]+~[a-z0-9.-]+$/;

export function checkPodUID(uid: string): string {
  if (!POD_UID.test(uid) || uid === '-') throw new UnsafePathComponentError('pod uid', uid);
  return uid;
}

export function checkVolumeName(name: string): string {
  if (!DNS1123_LABEL.test(name)) throw new UnsafePathComponentError('volume name', name);
  return name;
}

export function checkContainerName(name: string): string {
  if (!DNS1123_LABEL.test(name)) throw new UnsafePathComponentError('container name', name);
  return name;
}

export function checkNamespace(namespace: string): string {
  if (!DNS1123_LABEL.test(namespace)) throw new UnsafePathComponentError('namespace', namespace);
  return namespace;
}

export function checkPodName(name: string): string {
  if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) throw new UnsafePathComponentError('pod name', name);
  return name;
}

function checkPluginDir(dir: string): string {
  if (!PLUGIN_DIR.test(dir)) throw new UnsafePathComponentError('volume plugin directory', dir);
  return dir;
}

export function podDir(rootDir: string, uid: string): string {
  return path.join(rootDir, 'pods', checkPodUID(uid));
}

export function podVolumeDir(rootDir: string, uid: string, pluginDir: string, volumeName: string): string {
  return path.join(podDir(rootDir, uid), 'volumes', checkPluginDir(pluginDir), checkVolumeName(volumeName));
}

export function podContainerDir(rootDir: string, uid: string, containerName: string): string {
  return path.join(podDir(rootDir, uid), 'containers', checkContainerName(containerName));
}

/** The pod's user namespace mappings, as the kubelet keeps them (its userns manager's `userns` file). */
export function podUserNamespaceFile(rootDir: string, uid: string): string {
  return path.join(podDir(rootDir, uid), 'userns');
}

export function podEtcHostsPath(rootDir: string, uid: string): string {
  return path.join(podDir(rootDir, uid), 'etc-hosts');
}

/** Where subPath bind mounts live: <pod dir>/volume-subpaths/<volume>/<container>/<mount index>. */
export function podVolumeSubpathsDir(rootDir: string, uid: string): string {
  return path.join(podDir(rootDir, uid), 'volume-subpaths');
}

export function podSubPathTarget(
  rootDir: string,
  uid: string,
  volumeName: string,
  containerName: string,
  mountIndex: number,
): string {
  if (!Number.isSafeInteger(mountIndex) || mountIndex < 0)
    throw new UnsafePathComponentError('volumeMount index', String(mountIndex));
  return path.join(
    podVolumeSubpathsDir(rootDir, uid),
    checkVolumeName(volumeName),
    checkContainerName(containerName),
    String(mountIndex),
  );
}
