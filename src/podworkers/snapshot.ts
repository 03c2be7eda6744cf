// A pod worker as the parts that read the workers see it (status, node shutdown, systemd, `bootlet pods`).
import type { DefaultedPod } from '../k8s/pod.js';
import type { PodRecord } from './pod-record.js';
import type { TerminationRequest } from './termination-request.js';
import type { PodWorkerStateName, SyncOutcome } from './worker-context.js';

export interface PodWorkerSnapshot {
  readonly uid: string;
  readonly key: string;
  /** Read it with the predicates of pod-states.ts. */
  readonly state: PodWorkerStateName;
  readonly pod?: DefaultedPod;
  /** Found in the runtime with no source that gives it. */
  readonly orphan: boolean;
  readonly lastSync?: SyncOutcome;
  /** Why and how it is being stopped, once it is. */
  readonly termination?: TerminationRequest;
  /** Being stopped for good: its manifest was removed or replaced, it is an orphan, or it was preempted. */
  readonly removing?: boolean;
}

export function snapshotOf(r: PodRecord): PodWorkerSnapshot {
  const ctx = r.worker.ctx;
  return {
    uid: r.uid,
    key: r.key,
    state: r.worker.state,
    pod: ctx.desired,
    orphan: ctx.desired === undefined,
    lastSync: ctx.lastSync,
    termination: r.termination,
    removing: r.removing,
  };
}
