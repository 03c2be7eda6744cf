// What the agent tells systemd while it starts and after: READY once every static pod found at
// start has had its first sync, and a STATUS line naming what it still waits for, e.g.
// "3/4 static pods running; waiting for kube-apiserver-node1 (CrashLoopBackOff)".
import type { Pod } from 'kubernetes-types/core/v1';
import { podRow } from '../status/print/pod-row.js';

export interface PodView {
  readonly uid: string;
  /** Name as the node shows it (`kube-apiserver-node1`). */
  readonly name: string;
  /** The pod with its latest status, when one has been computed. */
  readonly pod?: Pod;
  /** The pod worker has finished its first sync of this pod (successful or not). */
  readonly synced: boolean;
}

export interface StartupProgress {
  readonly ready: boolean;
  readonly status: string;
}

function isRunningAndReady(p: Pod | undefined): boolean {
  if (p?.status?.phase !== 'Running') return false;
  return (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Why a pod is not running and ready, in kubectl's words (CrashLoopBackOff, ContainerCreating, 0/1 ready). */
function waitingReason(v: PodView, nowMs: number): string {
  if (!v.pod?.status) return v.synced ? 'no status yet' : 'not synced yet';
  const row = podRow(v.pod, nowMs);
  if (row.status === 'Running') return `Running, ${row.ready} ready`;
  return row.status;
}

const MAX_NAMED = 3;

/**
 * @param initial the UIDs of the static pods found when the sources were first read
 * @param pods every static pod the agent has now
 */
export function startupProgress(
  initial: ReadonlySet<string>,
  pods: readonly PodView[],
  nowMs: number,
): StartupProgress {
  const byUid = new Map(pods.map((p) => [p.uid, p]));
  // A pod of the initial set that is gone (manifest removed) is not waited for.
  const ready = [...initial].every((uid) => byUid.get(uid)?.synced ?? true);
  const running = pods.filter((p) => isRunningAndReady(p.pod));
  const waiting = pods
    .filter((p) => !isRunningAndReady(p.pod))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let status = `${running.length}/${pods.length} static pods running`;
  if (waiting.length > 0) {
    const named = waiting.slice(0, MAX_NAMED).map((p) => `${p.name} (${waitingReason(p, nowMs)})`);
    const more = waiting.length > MAX_NAMED ? ` and ${waiting.length - MAX_NAMED} more` : '';
    status += `; waiting for ${named.join(', ')}${more}`;
  }
  return { ready, status };
}
