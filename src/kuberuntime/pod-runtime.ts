// What a pod worker does to the container runtime, in pod terms (what runs, it reads from the pod
// cache). Implemented over CRI by
// src/kuberuntime/pod-operations.ts; unit tests use a fake.
import type { Container, LifecycleHandler } from 'kubernetes-types/core/v1';
import type { ContainerType } from './labels.js';
import type { DefaultedPod } from '../k8s/pod.js';
import type { StartsAhead } from './starts-ahead.js';

/** The old name of DefaultedPod, kept for importers that predate src/k8s. */
export type DesiredPod = DefaultedPod;

export interface SandboxRef {
  readonly id: string;
  readonly attempt: number;
  /** The sandbox's IP ('' for host-network pods or when the runtime has none yet). */
  readonly ip: string;
  /** Its other IPs (the second family of a dual-stack pod), as PodSandboxStatus lists them. */
  readonly additionalIps?: readonly string[];
  /** Made by this sync: what its first starts looked up while the sandbox was being made. */
  readonly ahead?: StartsAhead;
}

/** A start that failed for a reason the pod's status should show (ErrImagePull, CreateContainerConfigError, ...). */
export class ContainerStartError extends Error {
  constructor(
    readonly container: string,
    readonly reason: string,
    message: string,
    /** The step that failed, for the event: 'pull' (Failed), 'mount' (FailedMount), or 'start'. */
    readonly step: 'pull' | 'mount' | 'start' = 'start',
    /** For a failed pull: the image that failed when it is not the container's own (an image volume's). */
    readonly image?: string,
  ) {
    super(message);
    this.name = 'ContainerStartError';
  }
}

export interface StartedContainer {
  readonly id: string;
  /** Set when the image had to be pulled, with how long it took. */
  readonly pullMs?: number;
  /** The images of the image volumes it mounts, each with pullMs when it had to be pulled. */
  readonly volumeImages?: readonly { readonly reference: string; readonly pullMs?: number }[];
  /** Warnings for the pod's events (env keys that were skipped), with the kubelet's reasons. */
  readonly warnings?: readonly { readonly reason: string; readonly message: string }[];
}

export interface PodRuntime {
  /** Creates the pod's directories and runs a sandbox. */
  /** `firstStarts`: the containers this sync starts in it next, whose look-ups go beside RunPodSandbox. */
  createSandbox(pod: DefaultedPod, attempt: number, firstStarts?: readonly Container[]): Promise<SandboxRef>;
  /**
   * Pulls if needed, prepares volumes, creates and starts the container (carrying the restart request
   * it was started under). `onCreate` is called just before CreateContainer (after the image, volumes
   * and config are ready). `targetContainerId`: an ephemeral container's target, whose PID namespace it joins.
   */
  startContainer(
    pod: DefaultedPod,
    sandbox: SandboxRef,
    container: Container,
    type: ContainerType,
    restartCount: number | undefined,
    restartedAt?: string,
    onCreate?: () => void,
    targetContainerId?: string,
  ): Promise<StartedContainer>;
  startCreatedContainer(id: string): Promise<void>;
  /** Runs a preStop (or postStart) handler against a running container; rejects with the reason it failed. */
  runHook(
    pod: DefaultedPod | undefined,
    container: Container,
    containerId: string,
    handler: LifecycleHandler,
    timeoutSeconds: number,
    podIP: string | undefined,
  ): Promise<void>;
  /** Stop signal, then SIGKILL after `graceSeconds` (done by the runtime). NotFound is success. */
  stopContainer(id: string, graceSeconds: number): Promise<void>;
  stopSandbox(id: string): Promise<void>;
  removeContainer(id: string): Promise<void>;
  removeSandbox(id: string): Promise<void>;
  /** Removes what the node keeps for a pod that is gone: volume dirs, etc-hosts, logs. */
  cleanupPod(uid: string, namespace: string, name: string): Promise<void>;
}
