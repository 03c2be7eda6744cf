import { arr, meta, obj, str, type Json, type KObject } from '../types.js';
import { AGE_COLUMN, NAME_COLUMN, col, type Column } from './columns.js';
import { since } from './human-duration.js';

export const NODE_COLUMNS: Column[] = [
  NAME_COLUMN,
  col('Status', 'Ready or NotReady from the Ready condition; SchedulingDisabled when cordoned.'),
  col('Roles', 'Roles from node-role.kubernetes.io/<role> labels.'),
  AGE_COLUMN,
  col('Version', 'Kubelet version the node reports.'),
  col('Internal-IP', 'The first InternalIP address.', 1),
  col('External-IP', 'The first ExternalIP address.', 1),
  col('OS-Image', 'The OS image the node reports.', 1),
  col('Kernel-Version', 'The kernel version the node reports.', 1),
  col('Container-Runtime', 'The container runtime and version.', 1),
];

function roles(labels: Record<string, string>): string {
  const out = new Set<string>();
  for (const [k, v] of Object.entries(labels)) {
    if (k.startsWith('node-role.kubernetes.io/')) {
      const role = k.slice('node-role.kubernetes.io/'.length);
      if (role) out.add(role);
    } else if (k === 'kubernetes.io/role' && v) out.add(v);
  }
  return out.size ? [...out].sort().join(',') : '<none>';
}

function address(status: Record<string, Json>, type: string): string {
  const a = arr(status.addresses)
    .map(obj)
    .find((x) => str(x.type) === type);
  return a ? str(a.address) : '<none>';
}

/** The node row of `kubectl get nodes`, as the server-side node printer makes it. */
export function nodeCells(node: KObject): Json[] {
  const status = obj(node.status);
  const info = obj(status.nodeInfo);
  const ready = arr(status.conditions)
    .map(obj)
    .find((c) => str(c.type) === 'Ready');
  const states: string[] = [];
  if (ready) states.push(str(ready.status) === 'True' ? 'Ready' : 'NotReady');
  else states.push('Unknown');
  if (obj(node.spec).unschedulable === true) states.push('SchedulingDisabled');
  const m = meta(node);
  return [
    m.name,
    states.join(','),
    roles(m.labels),
    since(str(node.metadata.creationTimestamp)),
    str(info.kubeletVersion),
    address(status, 'InternalIP'),
    address(status, 'ExternalIP'),
    str(info.osImage) || '<unknown>',
    str(info.kernelVersion) || '<unknown>',
    str(info.containerRuntimeVersion) || '<unknown>',
  ];
}
