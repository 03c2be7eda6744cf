// The Node as bootlet registers it, and its status: what the kubelet's setters fill in
// (addresses, capacity, nodeInfo, conditions), computed from NodeInfoSource alone, so that it can
// be diffed without a server. Heartbeat times change every round; they alone never justify a post.
import type { Node, NodeCondition, NodeStatus } from 'kubernetes-types/core/v1';
import { apiTime } from '../../util/api-time.js';
import { stableJson } from '../../util/stable-json.js';
import { initialNodeLabels, type NodeInfoSource } from '../../node/node-info.js';
import { ATTACH_DETACH_ANNOTATION } from '../../k8s/node-labels.js';

/** The kubelet's default kubelet port, shown as daemonEndpoints.kubeletEndpoint. */
const KUBELET_PORT = 10250;

interface ConditionSpec {
  type: string;
  bad: boolean;
  ok: { status: 'True' | 'False'; reason: string; message: string };
  notOk: { status: 'True' | 'False'; reason: string; message: string };
}

/** ReadyCondition's errors in the kubelet's order: runtime, network, node shutdown. */
function notReadyErrors(info: NodeInfoSource): string[] {
  const network = info.networkNotReady?.();
  return [
    ...(info.runtimeReady() ? [] : ['container runtime is down or not ready']),
    ...(network !== undefined ? [network] : []),
    ...(info.shuttingDown?.() ? ['node is shutting down'] : []),
  ];
}

/** Aggregated as utilerrors does: one alone, several as [a, b]. */
function notReadyMessage(errs: string[]): string {
  return errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`;
}

function conditionSpecs(info: NodeInfoSource): ConditionSpec[] {
  const p = info.pressure();
  const notReady = notReadyErrors(info);
  return [
    {
      type: 'MemoryPressure',
      bad: p.memory,
      ok: { status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
      notOk: {
        status: 'True',
        reason: 'KubeletHasInsufficientMemory',
        message: 'kubelet has insufficient memory available',
      },
    },
    {
      type: 'DiskPressure',
      bad: p.disk,
      ok: { status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
      notOk: { status: 'True', reason: 'KubeletHasDiskPressure', message: 'kubelet has disk pressure' },
    },
    {
      type: 'PIDPressure',
      bad: p.pid,
      ok: { status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
      notOk: { status: 'True', reason: 'KubeletHasInsufficientPID', message: 'kubelet has insufficient PID available' },
    },
    {
      type: 'Ready',
      bad: notReady.length > 0,
      ok: { status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
      notOk: { status: 'False', reason: 'KubeletNotReady', message: notReadyMessage(notReady) },
    },
  ];
}

/**
 * The node status now. Transition times are carried over from `previous` for conditions whose
 * status did not change, as the kubelet's condition setters do.
 */
export function computeNodeStatus(info: NodeInfoSource, previous: NodeStatus | undefined, now: Date): NodeStatus {
  const ts = apiTime(now);
  const conditions: NodeCondition[] = conditionSpecs(info).map((c) => {
    const v = c.bad ? c.notOk : c.ok;
    const prev = previous?.conditions?.find((x) => x.type === c.type);
    const lastTransitionTime =
      prev && prev.status === v.status && prev.lastTransitionTime ? prev.lastTransitionTime : ts;
    return {
      type: c.type,
      status: v.status,
      reason: v.reason,
      message: v.message,
      lastHeartbeatTime: ts,
      lastTransitionTime,
    };
  });
  // As the kubelet's RuntimeHandlers setter: each handler with both features said (omitted when there are none).
  const runtimeHandlers = info.runtimeHandlers?.() ?? [];
  const features = info.runtimeFeatures?.();
  // As the kubelet's setter: the list, sorted, omitted when empty (omitempty).
  const declaredFeatures = info.declaredFeatures?.() ?? [];
  const addresses = [];
  if (info.nodeIP) addresses.push({ type: 'InternalIP', address: info.nodeIP });
  addresses.push({ type: 'Hostname', address: info.nodeName });
  return {
    addresses,
    allocatable: info.allocatable(),
    capacity: info.capacity(),
    conditions,
    daemonEndpoints: { kubeletEndpoint: { Port: info.kubeletPort ?? KUBELET_PORT } },
    nodeInfo: {
      architecture: info.architecture,
      bootID: info.bootID,
      containerRuntimeVersion: info.runtimeVersion,
      kernelVersion: info.kernelVersion,
      kubeProxyVersion: '',
      kubeletVersion: info.kubeletVersion,
      machineID: info.machineID,
      operatingSystem: info.operatingSystem,
      osImage: info.osImage,
      systemUUID: info.systemUUID,
    },
    ...(runtimeHandlers.length > 0 ? { runtimeHandlers: runtimeHandlers.map((h) => ({ ...h })) } : {}),
    ...(declaredFeatures.length > 0 ? { declaredFeatures: [...declaredFeatures] } : {}),
    // As the kubelet's RuntimeFeatures setter: status.features once the runtime reports its features (KEP-3619).
    ...(features ? { features: { ...features } } : {}),
  };
}

/** The Node to POST on first registration. */
export function buildNode(info: NodeInfoSource, status: NodeStatus): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: info.nodeName,
      labels: initialNodeLabels(info),
      annotations: { [ATTACH_DETACH_ANNOTATION]: 'true' },
    },
    spec: info.taints.length > 0 ? { taints: info.taints.map((t) => ({ ...t })) } : {},
    status,
  };
}

/** Status without heartbeat times, for "did anything change?". */
function withoutHeartbeats(s: NodeStatus): NodeStatus {
  return { ...s, conditions: s.conditions?.map(({ lastHeartbeatTime: _, ...c }) => c) };
}

/**
 * True when something we report, other than heartbeat times, differs (capacity drift, a condition
 * flip...). Fields and conditions others own on the server copy (images, NetworkUnavailable) are not ours to compare.
 */
export function nodeStatusChanged(server: NodeStatus | undefined, ours: NodeStatus): boolean {
  if (!server) return true;
  const types = new Set((ours.conditions ?? []).map((c) => c.type));
  const projected: Record<string, unknown> = {};
  for (const k of Object.keys(ours)) projected[k] = (server as Record<string, unknown>)[k];
  const view: NodeStatus = {
    ...(projected as NodeStatus),
    conditions: (server.conditions ?? []).filter((c) => types.has(c.type)),
  };
  return stableJson(withoutHeartbeats(view)) !== stableJson(withoutHeartbeats(ours));
}

/**
 * The strategic-merge patch for nodes/<name>/status. conditions and addresses merge by type, so
 * sending the full lists updates ours and keeps anything others added; `$setElementOrder` keeps ours in order.
 */
export function nodeStatusPatch(status: NodeStatus): { status: Record<string, unknown> } {
  return {
    status: {
      ...status,
      '$setElementOrder/conditions': (status.conditions ?? []).map((c) => ({ type: c.type })),
      '$setElementOrder/addresses': (status.addresses ?? []).map((a) => ({ type: a.type })),
    },
  };
}
