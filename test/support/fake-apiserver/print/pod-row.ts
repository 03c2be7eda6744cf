import { arr, isObject, meta, num, obj, str, type Json, type KObject } from '../types.js';
import { AGE_COLUMN, NAME_COLUMN, col, type Column } from './columns.js';
import { since } from './human-duration.js';

export const POD_COLUMNS: Column[] = [
  NAME_COLUMN,
  col('Ready', 'Ready containers out of all containers.'),
  col('Status', 'The pod status as kubectl summarises it from phase and container states.'),
  col('Restarts', 'Container restarts, with the time of the latest.'),
  AGE_COLUMN,
  col('IP', 'The pod IP.', 1),
  col('Node', 'The node the pod is bound to.', 1),
  col('Nominated Node', 'The node the scheduler nominated by preemption.', 1),
  col('Readiness Gates', 'Readiness gates that are true out of all.', 1),
];

interface State {
  waiting?: { reason: string };
  running?: boolean;
  terminated?: { reason: string; exitCode: number; signal: number; finishedAt: string };
}

function stateOf(v: Json | undefined): State {
  const s = obj(v);
  const out: State = {};
  if (isObject(s.waiting)) out.waiting = { reason: str(s.waiting.reason) };
  if (isObject(s.running)) out.running = true;
  if (isObject(s.terminated)) {
    const t = s.terminated;
    out.terminated = {
      reason: str(t.reason),
      exitCode: num(t.exitCode) ?? 0,
      signal: num(t.signal) ?? 0,
      finishedAt: str(t.finishedAt),
    };
  }
  return out;
}

function later(a: string, b: string): string {
  return !a || (b && Date.parse(b) > Date.parse(a)) ? b : a;
}

function conditionTrue(status: Record<string, Json>, type: string): boolean {
  return arr(status.conditions).some((c) => str(obj(c).type) === type && str(obj(c).status) === 'True');
}

/** The pod row of `kubectl get pods`, computed as the server-side pod printer does. */
export function podCells(pod: KObject): Json[] {
  const spec = obj(pod.spec);
  const status = obj(pod.status);
  const initSpecs = arr(spec.initContainers).map(obj);
  const sidecar = (name: string): boolean =>
    initSpecs.some((c) => str(c.name) === name && str(c.restartPolicy) === 'Always');
  let restarts = 0;
  let sidecarRestarts = 0;
  let ready = 0;
  let total = arr(spec.containers).length;
  let lastRestart = '';
  let lastSidecarRestart = '';
  let reason = str(status.reason) || str(status.phase);
  for (const c of initSpecs) if (str(c.restartPolicy) === 'Always') total++;

  let initializing = false;
  const initStatuses = arr(status.initContainerStatuses).map(obj);
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i];
    const st = stateOf(cs.state);
    const last = stateOf(cs.lastState);
    restarts += num(cs.restartCount) ?? 0;
    if (last.terminated) lastRestart = later(lastRestart, last.terminated.finishedAt);
    if (sidecar(str(cs.name))) {
      sidecarRestarts += num(cs.restartCount) ?? 0;
      if (last.terminated) lastSidecarRestart = later(lastSidecarRestart, last.terminated.finishedAt);
      if (cs.started === true && cs.ready === true) ready++;
      continue;
    }
    if (st.terminated && st.terminated.exitCode === 0) continue;
    if (st.terminated) {
      const t = st.terminated;
      reason = t.reason
        ? `Init:${t.reason}`
        : t.signal !== 0
          ? `Init:Signal:${t.signal}`
          : `Init:ExitCode:${t.exitCode}`;
    } else if (st.waiting && st.waiting.reason && st.waiting.reason !== 'PodInitializing') {
      reason = `Init:${st.waiting.reason}`;
    } else {
      reason = `Init:${i}/${initSpecs.length}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || conditionTrue(status, 'Initialized')) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = arr(status.containerStatuses).map(obj);
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i];
      const st = stateOf(cs.state);
      const last = stateOf(cs.lastState);
      restarts += num(cs.restartCount) ?? 0;
      if (last.terminated) lastRestart = later(lastRestart, last.terminated.finishedAt);
      if (st.waiting?.reason) reason = st.waiting.reason;
      else if (st.terminated?.reason) reason = st.terminated.reason;
      else if (st.terminated)
        reason = st.terminated.signal !== 0 ? `Signal:${st.terminated.signal}` : `ExitCode:${st.terminated.exitCode}`;
      else if (cs.ready === true && st.running) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) reason = conditionTrue(status, 'Ready') ? 'Running' : 'NotReady';
  }

  const phase = str(status.phase);
  const terminal = phase === 'Succeeded' || phase === 'Failed';
  if (pod.metadata.deletionTimestamp && str(status.reason) === 'NodeLost') reason = 'Unknown';
  else if (pod.metadata.deletionTimestamp && !terminal) reason = 'Terminating';

  const restartText = restarts !== 0 && lastRestart ? `${restarts} (${since(lastRestart)} ago)` : String(restarts);
  const gates = arr(spec.readinessGates).map((g) => str(obj(g).conditionType));
  const gatesText =
    gates.length === 0 ? '<none>' : `${gates.filter((g) => conditionTrue(status, g)).length}/${gates.length}`;
  return [
    meta(pod).name,
    `${ready}/${total}`,
    reason,
    restartText,
    since(str(pod.metadata.creationTimestamp)),
    str(status.podIP) || '<none>',
    str(spec.nodeName) || '<none>',
    str(status.nominatedNodeName) || '<none>',
    gatesText,
  ];
}
