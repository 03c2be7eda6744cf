// The row of `kubectl get services`, as the server-side service printer makes it.
import { arr, meta, obj, str, type Json, type JsonObject, type KObject } from '../types.js';
import { AGE_COLUMN, NAME_COLUMN, col, type Column } from './columns.js';
import { since } from './human-duration.js';

export const SERVICE_COLUMNS: Column[] = [
  NAME_COLUMN,
  col('Type', 'The type of the service.'),
  col('Cluster-IP', 'The IP address of the service.'),
  col('External-IP', 'The external IPs of the service.'),
  col('Port(s)', 'The ports of the service.'),
  AGE_COLUMN,
  col('Selector', 'The label selector of the service.', 1),
];

function externalIp(spec: JsonObject, status: JsonObject): string {
  const type = str(spec.type);
  const external = arr(spec.externalIPs).map((x) => str(x));
  switch (type) {
    case 'ExternalName':
      return str(spec.externalName);
    case 'LoadBalancer': {
      const ingress = arr(obj(status.loadBalancer).ingress)
        .map((i) => str(obj(i).ip) || str(obj(i).hostname))
        .filter(Boolean);
      const all = [...ingress, ...external];
      return all.length ? all.join(',') : '<pending>';
    }
    default:
      return external.length ? external.join(',') : '<none>';
  }
}

function ports(spec: JsonObject): string {
  const out = arr(spec.ports).map((p) => {
    const port = obj(p);
    const np = port.nodePort;
    return np
      ? `${String(port.port)}:${String(np)}/${str(port.protocol)}`
      : `${String(port.port)}/${str(port.protocol)}`;
  });
  return out.length ? out.join(',') : '<none>';
}

function selector(spec: JsonObject): string {
  const entries = Object.entries(obj(spec.selector)).sort(([a], [b]) => a.localeCompare(b));
  return entries.length ? entries.map(([k, v]) => `${k}=${str(v)}`).join(',') : '<none>';
}

export function serviceCells(o: KObject): Json[] {
  const spec = obj(o.spec);
  return [
    meta(o).name,
    str(spec.type),
    str(spec.clusterIP) || '<none>',
    externalIp(spec, obj(o.status)),
    ports(spec),
    since(str(o.metadata.creationTimestamp)),
    selector(spec),
  ];
}
