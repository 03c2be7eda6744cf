// Host-side preparation of a container's mounts: hostPath checks, emptyDir directories (a tmpfs for
// medium: Memory), configMap, secret, projected and downwardAPI volumes (object-volumes.ts, kept
// current by volume-manager.ts), subPaths (bound safely, see subpath-mounts.ts), image volumes (mounted
// by the runtime from the image kuberuntime pulled: no host path), the managed /etc/hosts and the
// termination-message file, returned as CRI mounts.
import type { Container, Volume, VolumeMount } from 'kubernetes-types/core/v1';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MountPropagation, type Mount } from '../cri/cri-types.js';
import { hostNetworkHostsFile, podNetworkHostsFile } from './etc-hosts.js';
import { nullLogger, type Logger } from '../log/logger.js';
import { checkHostPathType } from './host-path.js';
import type { LabelledPod } from '../k8s/pod.js';
import { objectVolumeKind, writeObjectVolume } from './object-volumes.js';
import type { PodObjects } from './pod-objects.js';
import { ensureTmpfs } from './tmpfs-volumes.js';
import { memoryBackedEmptyDirBytes } from './empty-dir-size.js';
import { nodeAllocatable } from '../k8s/node-allocatable.js';
import { volumeManagerFor } from './volume-manager.js';
import { podContainerDir, podDir, podEtcHostsPath, podVolumeDir } from './pod-dirs.js';
import { bindSubPath } from './subpath-mounts.js';
import { SubPathError, VolumeError } from './volume-errors.js';
import { resolveRecursiveReadOnly } from './recursive-read-only.js';
import { errorMessage } from '../util/error-message.js';
import { allInOrder } from '../util/all-in-order.js';

export { PodCleanupError, SubPathError, UnsafePathComponentError, VolumeError } from './volume-errors.js';
export { RecursiveReadOnlyError } from './recursive-read-only.js';
export { removePodDirs } from './pod-cleanup.js';
export { VolumeManager, volumeManagerFor } from './volume-manager.js';

export const ETC_HOSTS_PATH = '/etc/hosts';
export const EMPTY_DIR_PLUGIN_DIR = 'kubernetes.io~empty-dir';

export interface PrepareVolumesOptions {
  /** kubelet --root-dir, e.g. /var/lib/kubelet. */
  rootDir: string;
  /** The node's hosts file, copied for host-network pods; default /etc/hosts. */
  nodeHostsFile?: string;
  /** Pod-network pods only: their IPs (none: no managed /etc/hosts, as before the sandbox has an IP). */
  podIPs?: string[];
  /** Pod-network pods only: the sandbox hostname. */
  hostname?: string;
  /** Where configMap, secret and token content comes from (API pods); without it only downwardAPI of those kinds works. */
  podObjects?: PodObjects;
  /** For the volume manager's update failures; default none. */
  logger?: Logger;
  /** Pod-network pods only: the pod's DNS domain (with a subdomain), written beside the hostname. */
  hostDomain?: string;
  /** The pod's runtime handler supports recursive read-only mounts (its features in the runtime's Status). */
  supportsRecursiveReadOnly?: boolean;
  /** The image of each image volume the container mounts, by volume name, as kuberuntime pulled it. */
  imageVolumes?: ReadonlyMap<string, VolumeImage>;
}

/** An image volume's image as the mount names it to the runtime. */
export type VolumeImage = NonNullable<Mount['image']>;

/** What a mount from the host carries in the image fields: nothing. */
const HOST_MOUNT = { image: null, imageSubPath: '' } as const;

function propagation(m: VolumeMount, container: Container): MountPropagation {
  switch (m.mountPropagation) {
    case 'HostToContainer':
      return MountPropagation.PROPAGATION_HOST_TO_CONTAINER;
    case 'Bidirectional':
      if (container.securityContext?.privileged !== true) {
        throw new VolumeError(
          `volumeMount ${JSON.stringify(m.name)}: Bidirectional mount propagation is available only to privileged containers`,
        );
      }
      return MountPropagation.PROPAGATION_BIDIRECTIONAL;
    case undefined:
    case 'None':
      return MountPropagation.PROPAGATION_PRIVATE;
    default:
      throw new VolumeError(
        `volumeMount ${JSON.stringify(m.name)}: invalid mountPropagation ${JSON.stringify(m.mountPropagation)}`,
      );
  }
}

/** Where the volume lives on the host, made ready (checked or created). */
async function volumeHostPath(pod: LabelledPod, v: Volume, opts: PrepareVolumesOptions): Promise<string> {
  const rootDir = opts.rootDir;
  if (v.hostPath) {
    // Validation refuses these already; a path built from them would not be the one written.
    if (!path.isAbsolute(v.hostPath.path) || v.hostPath.path.split('/').includes('..')) {
      throw new VolumeError(
        `volume ${JSON.stringify(v.name)}: hostPath ${JSON.stringify(v.hostPath.path)} must be an absolute path without '..'`,
      );
    }
    await checkHostPathType(v.hostPath.path, v.hostPath.type);
    return v.hostPath.path;
  }
  if (v.emptyDir) {
    const medium = v.emptyDir.medium ?? '';
    if (medium !== '' && medium !== 'Memory') {
      throw new VolumeError(
        `volume ${JSON.stringify(v.name)}: emptyDir medium ${JSON.stringify(medium)} is not supported by bootlet`,
      );
    }
    const dir = podVolumeDir(rootDir, pod.metadata.uid, EMPTY_DIR_PLUGIN_DIR, v.name);
    await mkdir(dir, { recursive: true });
    // World-writable as the kubelet makes it, so non-root containers can use it; chmod because
    // mkdir's mode is cut by the umask.
    await chmod(dir, 0o777);
    if (medium === 'Memory') {
      // The kubelet's medium: Memory, sized as it sizes it (empty-dir-size.ts). Unmounted by removePodDirs.
      const size = memoryBackedEmptyDirBytes(pod, v, nodeAllocatable().memoryBytes);
      await ensureTmpfs(dir, size).catch((err: unknown) => {
        throw err instanceof VolumeError
          ? err
          : new VolumeError(`MountVolume.SetUp failed for volume ${JSON.stringify(v.name)} : ${errorMessage(err)}`, {
              cause: err,
            });
      });
    }
    return dir;
  }
  if (objectVolumeKind(v)) {
    if (opts.podObjects) return volumeManagerFor(opts.podObjects, opts.logger ?? nullLogger).setUp(pod, v, rootDir);
    return (await writeObjectVolume(pod, v, { rootDir, objects: undefined, node: nodeAllocatable(undefined, rootDir) }))
      .dir;
  }
  const kind = Object.keys(v).find((k) => k !== 'name') ?? 'unknown';
  throw new VolumeError(
    `volume ${JSON.stringify(v.name)}: volume type ${kind} is not supported for static pods by bootlet`,
  );
}

/** The kubelet's checks of a subPath and their messages (makeMounts), for every kind of volume. */
export function checkSubPath(subPath: string): void {
  if (path.isAbsolute(subPath)) throw new VolumeError(`error SubPath \`${subPath}\` must not be an absolute path`);
  if (subPath.split('/').includes('..'))
    throw new VolumeError(`unable to provision SubPath \`${subPath}\`: must not contain '..'`);
}

/** The checks, then the safe bind of subpath-mounts.ts. */
async function subPathHostPath(
  pod: LabelledPod,
  container: Container,
  v: Volume,
  index: number,
  volumePath: string,
  m: VolumeMount,
  rootDir: string,
): Promise<string> {
  const subPath = m.subPath ?? '';
  checkSubPath(subPath);
  try {
    return await bindSubPath({
      rootDir,
      podUID: pod.metadata.uid,
      volumeName: v.name,
      containerName: container.name,
      mountIndex: index,
      volumePath,
      subPath,
    });
  } catch (err) {
    if (!(err instanceof VolumeError)) throw err;
    const why = `volumeMount ${JSON.stringify(m.name)} of container ${JSON.stringify(container.name)}: ${err.message}`;
    throw err instanceof SubPathError
      ? new SubPathError(`failed to prepare subPath for ${why}`)
      : new VolumeError(`failed to prepare subPath for ${why}`);
  }
}

async function writeEtcHosts(pod: LabelledPod, opts: PrepareVolumesOptions): Promise<string | undefined> {
  let content: string;
  if (pod.spec?.hostNetwork) {
    content = hostNetworkHostsFile(await readFile(opts.nodeHostsFile ?? ETC_HOSTS_PATH, 'utf8'), pod.spec.hostAliases);
  } else if (opts.podIPs && opts.podIPs.length > 0) {
    content = podNetworkHostsFile(
      opts.podIPs,
      opts.hostname ?? pod.metadata.name,
      opts.hostDomain ?? '',
      pod.spec?.hostAliases,
    );
  } else {
    return undefined;
  }
  const file = podEtcHostsPath(opts.rootDir, pod.metadata.uid);
  await writeFile(file, content, { mode: 0o644 });
  await chmod(file, 0o644);
  return file;
}

/** An empty file per container instance, where the container writes its termination message. */
async function terminationMessageFile(pod: LabelledPod, container: Container, rootDir: string): Promise<string> {
  const dir = podContainerDir(rootDir, pod.metadata.uid, container.name);
  await mkdir(dir, { recursive: true, mode: 0o750 });
  const file = path.join(dir, randomBytes(4).toString('hex'));
  await writeFile(file, '', { flag: 'wx' });
  // Any user in the container must be able to write it; chmod because of the umask.
  await chmod(file, 0o666);
  return file;
}

export async function prepareVolumes(
  pod: LabelledPod,
  container: Container,
  opts: PrepareVolumesOptions,
): Promise<Mount[]> {
  await mkdir(podDir(opts.rootDir, pod.metadata.uid), { recursive: true, mode: 0o750 });
  const volumes = new Map((pod.spec?.volumes ?? []).map((v) => [v.name, v]));
  // Each volume is made ready once, however many of the container's mounts use it.
  const ready = new Map<string, Promise<string>>();
  const volumePath = (v: Volume): Promise<string> => {
    let p = ready.get(v.name);
    if (!p) ready.set(v.name, (p = volumeHostPath(pod, v, opts)));
    return p;
  };
  const mountOf = async (m: VolumeMount, index: number): Promise<Mount> => {
    const v = volumes.get(m.name);
    if (!v) throw new VolumeError(`volumeMount ${JSON.stringify(m.name)}: no volume of that name in the pod`);
    if (m.subPathExpr)
      throw new VolumeError(`volumeMount ${JSON.stringify(m.name)}: subPathExpr is not supported by bootlet`);
    if (v.image) return imageMount(v, m, container, opts);
    const base = await volumePath(v);
    const hostPath = m.subPath ? await subPathHostPath(pod, container, v, index, base, m, opts.rootDir) : base;
    const mode = propagation(m, container);
    return {
      containerPath: m.mountPath,
      hostPath,
      // The kubelet mounts API-data volumes read-only whatever the volumeMount says.
      readonly: m.readOnly === true || objectVolumeKind(v) !== undefined,
      selinuxRelabel: false,
      propagation: mode,
      recursiveReadOnly: resolveRecursiveReadOnly(m, opts.supportsRecursiveReadOnly === true),
      ...HOST_MOUNT,
    };
  };
  const etcHostsMount = async (): Promise<Mount | undefined> => {
    if ((container.volumeMounts ?? []).some((m) => path.normalize(m.mountPath) === ETC_HOSTS_PATH)) return undefined;
    const hosts = await writeEtcHosts(pod, opts);
    return hosts
      ? {
          containerPath: ETC_HOSTS_PATH,
          hostPath: hosts,
          readonly: false,
          selinuxRelabel: true,
          propagation: MountPropagation.PROPAGATION_PRIVATE,
          recursiveReadOnly: false,
          ...HOST_MOUNT,
        }
      : undefined;
  };
  // The volumes side by side, as the kubelet's volume manager sets a pod's volumes up (a kubeadm
  // kube-apiserver has five hostPaths to check, each a stat or a mkdir through the thread pool,
  // which took turns before): the mounts keep the spec's order, a failure is the first in that order.
  const mounts = (
    await allInOrder<Mount | undefined>([...(container.volumeMounts ?? []).map(mountOf), etcHostsMount()])
  ).filter((m): m is Mount => m !== undefined);
  // Once the mounts are made: a container that cannot start leaves no termination-message file per retry.
  if (container.terminationMessagePath) {
    mounts.push({
      containerPath: container.terminationMessagePath,
      hostPath: await terminationMessageFile(pod, container, opts.rootDir),
      readonly: false,
      selinuxRelabel: false,
      propagation: MountPropagation.PROPAGATION_PRIVATE,
      recursiveReadOnly: false,
      ...HOST_MOUNT,
    });
  }
  return mounts;
}

/**
 * An image volume's mount, as the kubelet's makeMounts makes it: the image in place of a host path,
 * read-only whatever the volumeMount says (the image plugin's attributes), its subPath checked as any
 * other's and handed to the runtime as the directory inside the image; nothing on the host.
 */
function imageMount(v: Volume, m: VolumeMount, container: Container, opts: PrepareVolumesOptions): Mount {
  const subPath = m.subPath ?? '';
  if (subPath !== '') checkSubPath(subPath);
  const image = opts.imageVolumes?.get(v.name);
  // kuberuntime pulls every image volume a container mounts before it asks for its mounts.
  if (!image) throw new VolumeError(`volume ${JSON.stringify(v.name)}: its image was not pulled`);
  return {
    containerPath: m.mountPath,
    hostPath: '',
    readonly: true,
    selinuxRelabel: false,
    propagation: propagation(m, container),
    recursiveReadOnly: resolveRecursiveReadOnly(m, opts.supportsRecursiveReadOnly === true),
    image,
    imageSubPath: subPath,
  };
}
