// Pod lifecycle events: what changed in the runtime for one pod, to wake that pod's worker.

export type PodLifecycleEventType =
  'ContainerStarted' | 'ContainerDied' | 'ContainerRemoved' | 'ContainerChanged' | 'SandboxChanged';

export interface PodLifecycleEvent {
  readonly podUid: string;
  readonly type: PodLifecycleEventType;
  /** Container or sandbox id. */
  readonly id: string;
  readonly name?: string;
  /**
   * On ContainerDied: the runtime reported an OOM kill in this container (containerd's
   * /tasks/oom), so status can say OOMKilled even when the runtime's reason does not.
   */
  readonly oomKilled?: boolean;
}

export interface Pleg {
  start(): void;
  stop(): void;
  /** Milliseconds since the last successful relist (health signal for /healthz). */
  sinceLastRelistMs(): number;
}

/**
 * How runtime changes reach the PLEG: the CRI's GetContainerEvents stream, containerd's own task
 * event stream, or relisting alone.
 */
export type PlegMechanism = 'cri-events' | 'containerd-events' | 'relist';
