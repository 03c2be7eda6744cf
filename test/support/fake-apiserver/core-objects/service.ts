// Services as the registry stores them: the defaults of the v1 scheme, a ClusterIP from the service
// CIDR (kubeadm's 10.96.0.0/12) and node ports from 30000-32767, both kept over an update that leaves
// them out (as PUT without clusterIP has been allowed since 1.20), and the validation clients meet.
import { randomInt } from 'node:crypto';
import type { FieldCause } from '../status.js';
import type { ObjectStore } from '../store.js';
import { arr, isObject, num, obj, str, type Json, type JsonObject, type KObject } from '../types.js';

/** The first address of the service CIDR, the `kubernetes` Service's. */
export const KUBERNETES_SERVICE_IP = '10.96.0.1';
const TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];

function inServiceCidr(ip: string): boolean {
  const m = /^10\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  if (!m) return false;
  const [b, c, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return (
    b >= 96 &&
    b <= 111 &&
    c <= 255 &&
    d <= 255 &&
    !(b === 96 && c === 0 && d === 0) &&
    !(b === 111 && c === 255 && d === 255)
  );
}

function usedClusterIps(store: ObjectStore): Set<string> {
  return new Set(
    store
      .list('services')
      .map((s) => str(obj(s.spec).clusterIP))
      .filter(Boolean),
  );
}

function usedNodePorts(store: ObjectStore): Set<number> {
  const out = new Set<number>();
  for (const s of store.list('services'))
    for (const p of arr(obj(s.spec).ports)) if (num(obj(p).nodePort)) out.add(num(obj(p).nodePort) ?? 0);
  return out;
}

function allocateIp(used: Set<string>): string {
  // Random over the upper part of the range, as the allocator keeps the lowest addresses for requests.
  for (;;) {
    const ip = `10.${96 + randomInt(16)}.${randomInt(256)}.${1 + randomInt(254)}`;
    if (!used.has(ip) && ip !== KUBERNETES_SERVICE_IP && ip !== '10.96.0.10') return ip;
  }
}

function invalidCause(field: string, value: Json, why: string): FieldCause {
  return { type: 'FieldValueInvalid', field, detail: `Invalid value: ${JSON.stringify(value)}: ${why}` };
}

/** Scheme defaults (SetDefaults_Service and its ports), applied on create and update alike. */
function defaultService(spec: JsonObject): void {
  spec.type = str(spec.type) || 'ClusterIP';
  if (spec.type === 'ExternalName') return;
  spec.sessionAffinity = str(spec.sessionAffinity) || 'None';
  spec.internalTrafficPolicy = str(spec.internalTrafficPolicy) || 'Cluster';
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer')
    spec.externalTrafficPolicy = str(spec.externalTrafficPolicy) || 'Cluster';
  if (spec.type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
  spec.ports = arr(spec.ports).map((p) => {
    const port = { ...obj(p) };
    port.protocol = str(port.protocol) || 'TCP';
    if (port.targetPort === undefined || port.targetPort === 0 || port.targetPort === '')
      port.targetPort = port.port ?? null;
    return port;
  });
}

/** Defaults and allocations of a new Service; causes for what the allocators refuse. */
export function prepareServiceForCreate(o: KObject, store: ObjectStore): FieldCause[] {
  const spec = { ...obj(o.spec) };
  o.spec = spec;
  o.status = { loadBalancer: {} };
  defaultService(spec);
  if (spec.type === 'ExternalName') return [];
  const causes: FieldCause[] = [];
  const used = usedClusterIps(store);
  const asked = str(spec.clusterIP) || str(arr(spec.clusterIPs)[0]);
  if (asked && asked !== 'None') {
    if (!inServiceCidr(asked))
      causes.push(
        invalidCause(
          'spec.clusterIPs[0]',
          asked,
          'failed to allocate IP ' +
            asked +
            ': provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/12',
        ),
      );
    else if (used.has(asked))
      causes.push(
        invalidCause('spec.clusterIPs[0]', asked, `failed to allocate IP ${asked}: provided IP is already allocated`),
      );
  }
  const ip = asked || allocateIp(used);
  spec.clusterIP = ip;
  spec.clusterIPs = [ip];
  spec.ipFamilies = ['IPv4'];
  spec.ipFamilyPolicy = 'SingleStack';
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
    const ports = usedNodePorts(store);
    for (const p of arr(spec.ports)) {
      const port = obj(p);
      if (num(port.nodePort)) continue;
      let n: number;
      do n = 30000 + randomInt(2768);
      while (ports.has(n));
      ports.add(n);
      port.nodePort = n;
    }
  }
  return causes;
}

/** What an update keeps from the stored Service, and the fields that may not change once set. */
export function prepareServiceForUpdate(next: KObject, prev: KObject): FieldCause[] {
  const spec = { ...obj(next.spec) };
  next.spec = spec;
  const old = obj(prev.spec);
  defaultService(spec);
  if (spec.type === 'ExternalName') return [];
  const causes: FieldCause[] = [];
  if (!str(spec.clusterIP) && arr(spec.clusterIPs).length === 0) {
    spec.clusterIP = old.clusterIP ?? null;
    spec.clusterIPs = old.clusterIPs ?? null;
  } else if (str(spec.clusterIP) && str(spec.clusterIP) !== str(old.clusterIP))
    causes.push(invalidCause('spec.clusterIPs[0]', str(spec.clusterIP), 'may not change once set'));
  spec.clusterIPs ??= [str(spec.clusterIP)];
  spec.ipFamilies ??= old.ipFamilies ?? ['IPv4'];
  spec.ipFamilyPolicy ??= old.ipFamilyPolicy ?? 'SingleStack';
  const oldPorts = arr(old.ports).map(obj);
  for (const p of arr(spec.ports)) {
    const port = obj(p);
    if (num(port.nodePort) || (spec.type !== 'NodePort' && spec.type !== 'LoadBalancer')) continue;
    const same = oldPorts.find((q) => q.port === port.port && str(q.protocol) === str(port.protocol));
    if (same && num(same.nodePort)) port.nodePort = same.nodePort ?? null;
  }
  return causes;
}

export function validateServiceSpec(o: KObject): FieldCause[] {
  const spec = obj(o.spec);
  const causes: FieldCause[] = [];
  const type = str(spec.type);
  if (!TYPES.includes(type))
    causes.push({
      type: 'FieldValueNotSupported',
      field: 'spec.type',
      detail: `Unsupported value: ${JSON.stringify(type)}: supported values: ${TYPES.map((t) => JSON.stringify(t)).join(', ')}`,
    });
  if (type === 'ExternalName') {
    if (!str(spec.externalName))
      causes.push({ type: 'FieldValueRequired', field: 'spec.externalName', detail: 'Required value' });
    return causes;
  }
  const ports = arr(spec.ports);
  if (ports.length === 0 && str(spec.clusterIP) !== 'None')
    causes.push({ type: 'FieldValueRequired', field: 'spec.ports', detail: 'Required value' });
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const port = isObject(p) ? p : {};
    const at = `spec.ports[${i}]`;
    const name = str(port.name);
    if (ports.length > 1 && !name)
      causes.push({ type: 'FieldValueRequired', field: `${at}.name`, detail: 'Required value' });
    if (name && names.has(name))
      causes.push({
        type: 'FieldValueDuplicate',
        field: `${at}.name`,
        detail: `Duplicate value: ${JSON.stringify(name)}`,
      });
    names.add(name);
    const n = num(port.port);
    if (n === undefined || n < 1 || n > 65535 || !Number.isInteger(n))
      causes.push(invalidCause(`${at}.port`, port.port ?? 0, 'must be between 1 and 65535, inclusive'));
    const proto = str(port.protocol);
    if (!PROTOCOLS.includes(proto))
      causes.push({
        type: 'FieldValueNotSupported',
        field: `${at}.protocol`,
        detail: `Unsupported value: ${JSON.stringify(proto)}: supported values: "SCTP", "TCP", "UDP"`,
      });
  });
  return causes;
}
