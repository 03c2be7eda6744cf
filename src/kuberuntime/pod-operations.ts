// The pod-level operations a pod worker asks for, done over CRI as the kubelet's kuberuntime
// manager does them: sandbox with its log directory, images (the image volumes' first), volumes,
// container config, start.
import { mkdir, readdir, symlink, unlink } from 'node:fs/promises';
import { totalmem } from 'node:os';
import path from 'node:path';
import type { Container, LifecycleHandler } from 'kubernetes-types/core/v1';
import type { PodCgroups } from '../cm/container-manager.js';
import type { Logger } from '../log/logger.js';
import type { DefaultedPod } from '../k8s/pod.js';
import { DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS } from '../k8s/defaults.js';
import { nodeAllocatable } from '../k8s/node-allocatable.js';
import { ContainerStartError, type PodRuntime, type SandboxRef, type StartedContainer } from './pod-runtime.js';
import { buildContainerConfig } from './container-config.js';
import {
  CriError,
  type ImageService,
  type LinuxContainerResources,
  type PodSandboxConfig,
  type RuntimeService,
} from '../cri/cri-types.js';
import { resourceConfigForPod } from '../cm/pod-resources.js';
import type { ResizableResource } from '../k8s/resize.js';
import { linuxContainerResources } from './resources.js';
import { ensureImage, ImageError } from './images.js';
import { ensureVolumeImages, hasImageVolumes, VolumeImageError, type PulledVolumeImage } from './image-volumes.js';
import type { ContainerType } from './labels.js';
import { buildSandboxConfig } from './sandbox-config.js';

import {
  containerLogDirectory,
  containerLogLinkName,
  containerLogLinksDir,
  containerLogPath,
  isContainerLogLinkOf,
  podLogDirectory,
  podLogsDirName,
  restartCountsWithLogs,
} from '../node/pod-logs/layout.js';
import type { PodObjects } from '../node/pod-objects.js';
import { removeTreeOnOneMount } from '../node/remove-tree.js';
import { prepareVolumes, removePodDirs, UnsafePathComponentError, VolumeError } from '../node/volumes.js';
import { runLifecycleHook } from './lifecycle-hooks.js';
import { startCreatedContainer } from './start-created-container.js';
import { podHostnameAndDomain } from './pod-hostname.js';
import { effectiveSecurityContext, verifyRunAsNonRoot } from './security-context.js';
import { errorMessage } from '../util/error-message.js';
import { fetchEnvObjects } from './env-objects.js';
import type { EnvWarning } from './env.js';
import { podPullSecrets } from './pull-secrets.js';
import { StartsAhead, type AheadOfStart, type ContainerInputs } from './starts-ahead.js';
import { UnstartedTasks } from './unstarted-task.js';
import { PodIsolation, type SandboxIsolation } from './pod-isolation.js';

/** A postStart hook that never returns must not hold the pod worker forever. */
const POST_START_TIMEOUT_SECONDS = 120;

export interface CriPodRuntimeOptions {
  runtime: RuntimeService;
  images: ImageService;
  rootDir: string;
  podLogsDir: string;
  nodeName: string;
  nodeIP: string;
  /** Content of the node's resolv.conf (resolvConf); undefined when resolvConf is "". */
  resolvConf: string | undefined;
  /** clusterDNS / clusterDomain, for pods that are not hostNetwork (and ClusterFirstWithHostNet). */
  clusterDNS?: string[];
  clusterDomain?: string;
  logger: Logger;
  /** The pod cgroups (src/cm); without it sandboxes get no cgroup parent. */
  cgroups?: PodCgroups;
  /** The API objects pods refer to (src/node/pod-objects.ts): volumes, env, pull secrets; absent without an API server, and then those fail to mount or to build. */
  podObjects?: PodObjects;
  /** Removes what containerd keeps of a start it never finished (containerd#11037); absent, such a container stays. */
  unstartedTasks?: UnstartedTasks;
  /**
   * RuntimeClass handlers, user namespaces and the handlers' features (pod-isolation.ts). Absent (unit
   * tests), every pod runs on the default handler in the node's user namespace, and a pod asking for
   * its own user namespace or a recursive read-only mount fails.
   */
  isolation?: PodIsolation;
}

async function ignoreNotFound(p: Promise<void>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (err instanceof CriError && err.notFound) return;
    throw err;
  }
}

function messageOf(err: unknown): string {
  if (err instanceof CriError) return err.details;
  return errorMessage(err);
}

export class CriPodRuntime implements PodRuntime {
  /** The kubelet's legacy /var/log/containers symlinks live beside podLogsDir. */
  private readonly containerLogLinksDir: string;
  private readonly isolation: PodIsolation;
  /** The runtime answered UpdatePodSandboxResources with Unimplemented: it is not asked again. */
  private sandboxUpdateUnserved = false;

  constructor(private readonly o: CriPodRuntimeOptions) {
    this.containerLogLinksDir = containerLogLinksDir(o.podLogsDir);
    this.isolation = o.isolation ?? PodIsolation.withoutRuntimeFeatures(o.logger);
  }

  private sandboxConfig(pod: DefaultedPod, attempt: number, isolation: SandboxIsolation) {
    const cgroupParent = this.o.cgroups?.podCgroupParent(pod) ?? '';
    return buildSandboxConfig(pod, {
      podLogsDir: this.o.podLogsDir,
      attempt,
      resolvConf: this.o.resolvConf,
      clusterDNS: this.o.clusterDNS,
      clusterDomain: this.o.clusterDomain,
      cgroupParent,
      namespaceOptions: isolation.namespaceOptions,
    });
  }

  /** The pod's handler and namespaces (rejects, in the kubelet's words, when they cannot be had). */
  private isolationOf(pod: DefaultedPod): Promise<SandboxIsolation> {
    return this.isolation.forPod(pod);
  }

  async createSandbox(pod: DefaultedPod, attempt: number, firstStarts: readonly Container[] = []): Promise<SandboxRef> {
    // As generatePodSandboxConfig: the RuntimeClass and the user namespace first; nothing is made
    // for a pod that cannot be isolated as it asks.
    const isolation = await this.isolationOf(pod);
    const logDir = podLogDirectory(this.o.podLogsDir, pod);
    const cgroups = this.o.cgroups;
    // Beside RunPodSandbox: the pod's log directory (the runtime opens it at CreateContainer, not
    // before) and, where the runtime makes a missing cgroup parent itself (cgroupfs), the pod cgroup
    // with its limits: the pause process may run a moment before they are written, no app container
    // ever does. Under systemd the pod's slice, with its properties, comes first, as the kubelet's
    // SyncPod makes the pod cgroup before the sandbox.
    const beside = cgroups?.runtimeMakesPodCgroup === true;
    const podCgroup = cgroups ? cgroups.ensurePodCgroup(pod, beside ? { limitsWhateverExists: true } : {}) : undefined;
    podCgroup?.catch(() => undefined);
    const logDirMade = mkdir(logDir, { recursive: true, mode: 0o755 });
    logDirMade.catch(() => undefined);
    if (!beside) await podCgroup;
    if (isolation.runtimeHandler !== '')
      this.o.logger.v(2).info('Running pod with runtime handler', {
        pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
        runtimeHandler: isolation.runtimeHandler,
      });
    const sandboxRequest = this.o.runtime.runPodSandbox(
      this.sandboxConfig(pod, attempt, isolation),
      isolation.runtimeHandler,
    );
    // A host-network pod's IPs are the node's: its containers' volumes and env need nothing of the
    // sandbox. An image volume's mounts need its image pulled, which waits for the start.
    const inputsOf =
      pod.spec?.hostNetwork && !hasImageVolumes(pod)
        ? (c: Container) => this.containerInputs(pod, c, [this.o.nodeIP])
        : undefined;
    const ahead =
      firstStarts.length > 0
        ? new StartsAhead({
            images: this.o.images,
            containers: firstStarts,
            logDirOf: (name) => containerLogDirectory(this.o.podLogsDir, pod, name),
            inputsOf,
            podCgroup,
          })
        : undefined;
    const [sandbox, cgroup, made] = await Promise.allSettled([sandboxRequest, podCgroup, logDirMade]);
    // Nothing made for the starts is still being written when the sandbox's outcome is told (a pod
    // removed now is cleaned up next, and must find it all).
    await ahead?.settled();
    // Told in the kubelet's order: the log directory, the pod cgroup, then the sandbox.
    if (made.status === 'rejected') throw made.reason;
    if (cgroup.status === 'rejected') throw cgroup.reason;
    if (sandbox.status === 'rejected') {
      const err: unknown = sandbox.reason;
      const explained = err instanceof CriError ? cgroups?.explainRuntimeError(err.details) : undefined;
      throw explained !== undefined && err instanceof CriError ? new CriError(err.method, err.code, explained) : err;
    }
    const id = sandbox.value;
    await cgroups?.checkSandboxPlacement(pod).catch(() => undefined);
    // As the kubelet's SyncPod: the new sandbox's IP (for hooks and probes) from its status; a
    // host-network pod has the node's.
    const network = pod.spec?.hostNetwork
      ? undefined
      : (await this.o.runtime.podSandboxStatus(id).catch(() => undefined))?.network;
    return {
      id,
      attempt,
      ip: network?.ip ?? '',
      additionalIps: (network?.additionalIps ?? []).map((x) => x.ip).filter(Boolean),
      ahead,
    };
  }

  /** A container's volumes, made ready for it, and the API objects its env reads. */
  private async containerInputs(
    pod: DefaultedPod,
    container: Container,
    podIPs: string[],
    volumeImages: readonly PulledVolumeImage[] = [],
  ): Promise<ContainerInputs> {
    const { hostname, domain } = podHostnameAndDomain(pod, this.o.clusterDomain);
    // The handler's features are looked at only for a container that asks for recursive read-only mounts.
    const asksRRO = (container.volumeMounts ?? []).some((m) => (m.recursiveReadOnly ?? 'Disabled') !== 'Disabled');
    const supportsRecursiveReadOnly = asksRRO && (await this.isolation.supportsRecursiveReadOnly(pod));
    const mounts = await prepareVolumes(pod, container, {
      supportsRecursiveReadOnly,
      rootDir: this.o.rootDir,
      podIPs,
      hostname,
      hostDomain: domain,
      podObjects: this.o.podObjects,
      logger: this.o.logger,
      imageVolumes: new Map(volumeImages.map((v) => [v.volume, v.spec])),
    });
    const envObjects = await fetchEnvObjects(pod, container, this.o.podObjects);
    return { mounts, envObjects };
  }

  /** With no earlier instance in the runtime, the next restart count is read from the log files. */
  private async restartCountFromLogs(pod: DefaultedPod, name: string): Promise<number> {
    const newest = (await restartCountsWithLogs(containerLogDirectory(this.o.podLogsDir, pod, name)))[0];
    return newest === undefined ? 0 : newest + 1;
  }

  async startContainer(
    pod: DefaultedPod,
    sandbox: SandboxRef,
    container: Container,
    type: ContainerType,
    restartCount: number | undefined,
    restartedAt?: string,
    onCreate?: () => void,
    targetContainerId?: string,
  ): Promise<StartedContainer> {
    // Asked while this sandbox was being made, for its first starts (starts-ahead.ts).
    const ahead = type === 'ephemeral' ? undefined : sandbox.ahead?.take(container.name);
    const count =
      restartCount ?? (ahead ? await ahead.restartCount : await this.restartCountFromLogs(pod, container.name));
    // The pod's namespaces again, as the kubelet's container config asks NamespacesForPod (its user
    // namespace is read back from the pod's file).
    let isolation: SandboxIsolation;
    try {
      isolation = await this.isolationOf(pod);
    } catch (err) {
      throw new ContainerStartError(container.name, 'CreateContainerConfigError', messageOf(err));
    }
    const sandboxConfig = this.sandboxConfig(pod, sandbox.attempt, isolation);
    // Three steps go at once: the pod cgroup, made again if it went missing since the sandbox started
    // (as the kubelet checks on each sync; the first starts in a sandbox this sync made take the one
    // made for it), the image, and the container's log directory. Their
    // failures are told in that order, as when they ran in turn. The image's ImageStatus needs
    // nothing of the cgroup, but a pull waits for it: the kubelet makes the pod cgroup before it
    // pulls, so a pod whose cgroup fails pulls nothing.
    const podCgroup = sandbox.ahead?.podCgroup ?? this.o.cgroups?.ensurePodCgroup(pod) ?? Promise.resolve();
    const [cgroup, image, logDir] = await Promise.allSettled([
      podCgroup,
      this.imageFor(pod, container, sandboxConfig, () => podCgroup, ahead?.image),
      ahead?.logDir ??
        mkdir(containerLogDirectory(this.o.podLogsDir, pod, container.name), { recursive: true, mode: 0o755 }),
    ]);
    if (cgroup.status === 'rejected') throw cgroup.reason;
    if (image.status === 'rejected') throw image.reason;
    const { imageRef, pullMs, volumeImages } = image.value;
    let config;
    const warnings: EnvWarning[] = [];
    try {
      if (effectiveSecurityContext(pod, container).runAsNonRoot === true) {
        // Only then is the image's user needed: one more ImageStatus, as the kubelet makes.
        const image = await this.o.images.imageStatus({ image: imageRef });
        verifyRunAsNonRoot(pod, container, image?.uid?.value, image?.username ?? '');
      }
      if (logDir.status === 'rejected') throw logDir.reason;
      // As the kubelet: a pod-network pod's env (status.podIP) and managed /etc/hosts carry the
      // sandbox's IPs, read from its status; a host-network pod has the node's.
      const podIPs = pod.spec?.hostNetwork
        ? [this.o.nodeIP]
        : [sandbox.ip, ...(sandbox.additionalIps ?? [])].filter(Boolean);
      const memoryBytes = totalmem();
      const { mounts, envObjects } =
        (await ahead?.inputs) ?? (await this.containerInputs(pod, container, podIPs, volumeImages));
      config = buildContainerConfig(pod, container, {
        envObjects,
        onEnvWarning: (w) => warnings.push(w),
        restartCount: count,
        restartedAt,
        targetContainerId,
        imageRef,
        type,
        nodeName: this.o.nodeName,
        hostIP: this.o.nodeIP,
        podIPs,
        mounts,
        nodeMemoryCapacityBytes: memoryBytes,
        nodeAllocatable: nodeAllocatable(memoryBytes, this.o.rootDir),
        namespaceOptions: isolation.namespaceOptions,
      });
    } catch (err) {
      throw new ContainerStartError(
        container.name,
        'CreateContainerConfigError',
        messageOf(err),
        err instanceof VolumeError ? 'mount' : 'start',
      );
    }
    let id: string;
    onCreate?.();
    try {
      id = await this.o.runtime.createContainer(sandbox.id, config, sandboxConfig);
    } catch (err) {
      throw new ContainerStartError(container.name, 'CreateContainerError', messageOf(err));
    }
    try {
      await this.o.runtime.startContainer(id);
    } catch (err) {
      throw new ContainerStartError(container.name, 'RunContainerError', messageOf(err));
    }
    await this.linkContainerLog(pod, container.name, id, containerLogPath(container.name, count));
    const postStart = container.lifecycle?.postStart;
    if (postStart) {
      try {
        await this.runHook(pod, container, id, postStart, POST_START_TIMEOUT_SECONDS, sandbox.ip);
      } catch (err) {
        // As the kubelet: a failed postStart hook kills the container; the restart policy decides what next.
        await ignoreNotFound(
          this.o.runtime.stopContainer(
            id,
            Math.max(2, pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS),
          ),
        );
        throw new ContainerStartError(container.name, 'PostStartHookError', messageOf(err));
      }
    }
    return {
      id,
      pullMs,
      warnings,
      volumeImages: volumeImages.map((v) => ({
        reference: v.reference,
        ...(v.pullMs === undefined ? {} : { pullMs: v.pullMs }),
      })),
    };
  }

  /**
   * The images of the image volumes the container mounts, then its own image's reference, each pulled
   * first when its pull policy says so (the kubelet pulls a pod's image volumes before it starts any
   * container); pullMs only when the container's image was pulled.
   */
  private async imageFor(
    pod: DefaultedPod,
    container: Container,
    sandboxConfig: PodSandboxConfig,
    beforePull: () => Promise<unknown>,
    status?: AheadOfStart['image'],
  ): Promise<{ imageRef: string; pullMs?: number; volumeImages: PulledVolumeImage[] }> {
    try {
      const podObjects = this.o.podObjects;
      const pullSecrets =
        podObjects && (pod.spec?.imagePullSecrets ?? []).length > 0
          ? () => podPullSecrets(pod, podObjects, this.o.logger)
          : undefined;
      const volumeImages = await ensureVolumeImages(this.o.images, pod, container, sandboxConfig, {
        pullSecrets,
        beforePull,
      });
      const t0 = Date.now();
      const ensured = await ensureImage(this.o.images, container, sandboxConfig, { pullSecrets, beforePull, status });
      return ensured.pulled
        ? { imageRef: ensured.imageRef, pullMs: Date.now() - t0, volumeImages }
        : { imageRef: ensured.imageRef, volumeImages };
    } catch (err) {
      if (err instanceof VolumeImageError)
        throw new ContainerStartError(container.name, err.reason, err.message, 'pull', err.reference);
      if (err instanceof ImageError) throw new ContainerStartError(container.name, err.reason, err.message, 'pull');
      throw err;
    }
  }

  async runHook(
    pod: DefaultedPod | undefined,
    container: Container,
    containerId: string,
    handler: LifecycleHandler,
    timeoutSeconds: number,
    podIP: string | undefined,
  ): Promise<void> {
    const ip = pod?.spec?.hostNetwork || !podIP ? this.o.nodeIP : podIP;
    await runLifecycleHook({ runtime: this.o.runtime, containerId, container, podIP: ip, timeoutSeconds }, handler);
  }

  startCreatedContainer(id: string): Promise<void> {
    return startCreatedContainer(this.o.runtime, id);
  }

  stopContainer(id: string, graceSeconds: number): Promise<void> {
    return ignoreNotFound(this.o.runtime.stopContainer(id, graceSeconds));
  }

  stopSandbox(id: string): Promise<void> {
    return ignoreNotFound(this.o.runtime.stopPodSandbox(id));
  }

  async removeContainer(id: string): Promise<void> {
    await this.unlinkContainerLog(id);
    try {
      await ignoreNotFound(this.o.runtime.removeContainer(id));
    } catch (err) {
      if (!UnstartedTasks.isRefusal(err) || !(await this.o.unstartedTasks?.release(id))) throw err;
      await ignoreNotFound(this.o.runtime.removeContainer(id));
    }
  }

  removeSandbox(id: string): Promise<void> {
    return ignoreNotFound(this.o.runtime.removePodSandbox(id));
  }

  /**
   * Throws PodCleanupError (retryable: a subPath bind that would not unmount, a mount found in
   * the way, an I/O error) with nothing crossed. Names from runtime labels that could never have
   * named a directory of ours are logged and skipped: there is nothing to remove for them.
   */
  async cleanupPod(uid: string, namespace: string, name: string): Promise<void> {
    let logsDir: string | undefined;
    try {
      logsDir = path.join(this.o.podLogsDir, podLogsDirName(namespace, name, uid));
    } catch (err) {
      if (!(err instanceof UnsafePathComponentError)) throw err;
      this.o.logger.warn(
        'Not removing pod directories: a name read back from the runtime is not a valid path component',
        { pod: `${namespace}/${name}`, podUID: uid, err: err.message },
      );
      return;
    }
    await removePodDirs(this.o.rootDir, uid, this.o.podObjects);
    // Its user namespace file went with the directory: the block is free for another pod.
    await this.isolation.release(uid);
    await removeTreeOnOneMount(logsDir);
    // Never throws; a cgroup still busy is retried by the container manager on its own.
    await this.o.cgroups?.removePodCgroup(uid);
  }

  /** The legacy /var/log/containers link, what log shippers configured for the kubelet read. */
  private async linkContainerLog(pod: DefaultedPod, name: string, id: string, relLog: string): Promise<void> {
    let link = this.containerLogLinksDir;
    try {
      link = path.join(this.containerLogLinksDir, containerLogLinkName(pod, name, id));
      await mkdir(this.containerLogLinksDir, { recursive: true });
      await symlink(path.join(podLogDirectory(this.o.podLogsDir, pod), relLog), link);
    } catch (err) {
      this.o.logger.v(2).info('Could not create the container log symlink', { path: link, err: messageOf(err) });
    }
  }

  private async unlinkContainerLog(id: string): Promise<void> {
    let entries: string[];
    try {
      entries = await readdir(this.containerLogLinksDir);
    } catch {
      return;
    }
    await Promise.all(
      entries
        .filter((e) => isContainerLogLinkOf(e, id))
        .map((e) => unlink(path.join(this.containerLogLinksDir, e)).catch(() => undefined)),
    );
  }

  containerResources(pod: DefaultedPod, container: Container): LinuxContainerResources {
    return linuxContainerResources(pod, container, totalmem());
  }

  async updateContainerResources(id: string, resources: LinuxContainerResources): Promise<void> {
    await this.o.runtime.updateContainerResources(id, resources);
  }

  async resizePodCgroup(pod: DefaultedPod, resources: readonly ResizableResource[]): Promise<void> {
    await this.o.cgroups?.resizePodCgroup(pod, resources);
  }

  async updateSandboxResources(pod: DefaultedPod, sandboxId: string): Promise<void> {
    if (this.sandboxUpdateUnserved) return;
    const cfg = resourceConfigForPod(pod, { enforceCpuLimits: true, podPidsLimit: 0 });
    const resources: LinuxContainerResources = {
      cpuShares: cfg.cpuShares ?? 0,
      cpuQuota: cfg.cpuQuota ?? 0,
      cpuPeriod: cfg.cpuPeriod ?? 0,
      memoryLimitInBytes: cfg.memoryLimit ?? 0,
    };
    try {
      await this.o.runtime.updatePodSandboxResources(sandboxId, resources);
    } catch (err) {
      // The kubelet goes on where the runtime does not serve it (containerd before 2.1).
      if (err instanceof CriError && err.unimplemented) {
        this.sandboxUpdateUnserved = true;
        this.o.logger.v(2).info('The runtime does not serve UpdatePodSandboxResources; resizing without it');
        return;
      }
      throw err;
    }
  }
}
