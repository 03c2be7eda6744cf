// ContainerConfig for CreateContainer, built from the pod and one of its containers as the
// kubelet's generateContainerConfig does. Mounts are prepared beforehand (volumes.ts) and the
// image reference resolved (images.ts).
import type { Container } from 'kubernetes-types/core/v1';
import { nodeAllocatable, type NodeAllocatable } from '../k8s/node-allocatable.js';
import type { ContainerConfig, Mount } from '../cri/cri-types.js';
import { hashContainer, kubeletContainerHash } from './container-hash.js';
import { containerEnv, expandCommand, type EnvWarning } from './env.js';
import type { EnvObjects } from './env-objects.js';
import type { LabelledPod } from '../k8s/pod.js';
import { containerAnnotations, containerLabels, type ContainerType } from './labels.js';
import { containerLogPath } from '../node/pod-logs/layout.js';
import { linuxContainerResources } from './resources.js';
import { containerSecurityContext, type SecurityOptions } from './security-context.js';
import { NamespaceMode, type LinuxContainerSecurityContext } from '../cri/cri-types.js';

export interface ContainerConfigContext extends SecurityOptions {
  restartCount: number;
  /** The restart request this container is started under (see labels.ts). */
  restartedAt?: string;
  /** An ephemeral container's target: the running container whose PID namespace it shares. */
  targetContainerId?: string;
  /** Image id or reference the runtime resolved (ImageStatus / PullImage). */
  imageRef: string;
  type: ContainerType;
  nodeName: string;
  hostIP: string;
  podIPs: string[];
  mounts: Mount[];
  nodeMemoryCapacityBytes: number;
  /**
   * For limits.* in resourceFieldRef when the container sets no limit; default: this node's, from
   * nodeMemoryCapacityBytes (k8s/node-allocatable.ts), the figure a downwardAPI volume reads too.
   */
  nodeAllocatable?: NodeAllocatable;
  /** What the env's ConfigMap, Secret and Service references found (env-objects.ts); none without an API server. */
  envObjects?: EnvObjects;
  onEnvWarning?: (w: EnvWarning) => void;
}

export function buildContainerConfig(
  pod: LabelledPod,
  container: Container,
  ctx: ContainerConfigContext,
): ContainerConfig {
  // spec.nodeName is set by the static-pod defaulting; fill it for env if a caller did not.
  const podForEnv = pod.spec?.nodeName
    ? pod
    : { ...pod, spec: { ...pod.spec, containers: pod.spec?.containers ?? [], nodeName: ctx.nodeName } };
  const envs = containerEnv(podForEnv, container, {
    hostIP: ctx.hostIP,
    podIPs: ctx.podIPs,
    // The kubelet's downward API defaults a missing limit to allocatable, not capacity.
    nodeAllocatable: ctx.nodeAllocatable ?? nodeAllocatable(ctx.nodeMemoryCapacityBytes),
    objects: ctx.envObjects,
    onWarning: ctx.onEnvWarning,
  });
  const config: ContainerConfig = {
    metadata: { name: container.name, attempt: ctx.restartCount },
    image: { image: ctx.imageRef, userSpecifiedImage: container.image ?? '' },
    command: expandCommand(container.command, envs),
    args: expandCommand(container.args, envs),
    workingDir: container.workingDir ?? '',
    envs,
    mounts: ctx.mounts,
    labels: containerLabels(pod, container.name),
    annotations: containerAnnotations(pod, container, {
      hash: kubeletContainerHash(container),
      specHash: hashContainer(container),
      restartCount: ctx.restartCount,
      type: ctx.type,
      restartedAt: ctx.restartedAt,
    }),
    logPath: containerLogPath(container.name, ctx.restartCount),
    stdin: container.stdin === true,
    stdinOnce: container.stdinOnce === true,
    tty: container.tty === true,
    linux: {
      resources: linuxContainerResources(pod, container, ctx.nodeMemoryCapacityBytes),
      securityContext: withTargetPidNamespace(containerSecurityContext(pod, container, ctx), ctx.targetContainerId),
    },
  };
  return config;
}

/**
 * As the kubelet's generateLinuxContainerConfig: a container given a target joins the target's PID
 * namespace, unless the pod already shares one (shareProcessNamespace, hostPID), where it sees it anyway.
 */
function withTargetPidNamespace(
  sc: LinuxContainerSecurityContext,
  targetId: string | undefined,
): LinuxContainerSecurityContext {
  const ns = sc.namespaceOptions;
  if (targetId === undefined || !ns || ns.pid !== NamespaceMode.CONTAINER) return sc;
  return { ...sc, namespaceOptions: { ...ns, pid: NamespaceMode.TARGET, targetId } };
}
