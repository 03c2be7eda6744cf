// Pod lifecycle events: what changed in the runtime for one pod, to wake that pod's worker.

export type PodLifecycleEventType = 'ContainerStarted' | 'ContainerDied' | 'ContainerRemoved' | 'ContainerChanged' | 'SandboxChanged';

export interface PodLifecycleEvent {
  readonly podUid: string;
  readonly type: PodLifecycleEventType;
  /** Container or sandbox id. */
  readonly id: string;
  readonly name?: string;
}

export interface Pleg {
  start(): void;
  stop(): void;
  /** Milliseconds since the last successful relist (health signal for /healthz). */
  sinceLastRelistMs(): number;
}
