// The service variables the kubelet puts in every container (getServiceEnvVarMap and
// envvars.FromServices): the `kubernetes` Service of `default` always, and with
// enableServiceLinks every Service of the pod's own namespace, each as `<NAME>_SERVICE_HOST`,
// `<NAME>_SERVICE_PORT[_<PORT NAME>]` and the docker-link `<NAME>_PORT...` family. Only services
// with a cluster IP count: a headless Service has no address to hand out.
import type { Service } from 'kubernetes-types/core/v1';

/** The services the kubelet links into every pod from `default`, whatever enableServiceLinks says. */
const MASTER_SERVICES = new Set(['kubernetes']);
const DEFAULT_NAMESPACE = 'default';

function isServiceIPSet(s: Service): boolean {
  const ip = s.spec?.clusterIP ?? '';
  return ip !== '' && ip !== 'None';
}

/** A Service or port name as a variable name: upper case, `-` and `.` to `_`, a leading digit guarded by `_`. */
export function serviceEnvName(name: string): string {
  const upper = name.replaceAll('.', '_').replaceAll('-', '_').toUpperCase();
  return /^[0-9]/.test(upper) ? `_${upper}` : upper;
}

function serviceVars(s: Service): Array<[string, string]> {
  const ports = s.spec?.ports ?? [];
  const ip = s.spec?.clusterIP ?? '';
  // A Service with a cluster IP always has a port (API validation); a malformed one is skipped rather than half-linked.
  if (ports.length === 0) return [];
  const prefix = serviceEnvName(s.metadata?.name ?? '');
  const out: Array<[string, string]> = [
    [`${prefix}_SERVICE_HOST`, ip],
    [`${prefix}_SERVICE_PORT`, String(ports[0]!.port)],
  ];
  for (const p of ports) if (p.name) out.push([`${prefix}_SERVICE_PORT_${serviceEnvName(p.name)}`, String(p.port)]);
  ports.forEach((p, i) => {
    const proto = (p.protocol || 'TCP').toLowerCase();
    const url = `${proto}://${ip}:${p.port}`;
    // Docker's links name the first port on its own too.
    if (i === 0) out.push([`${prefix}_PORT`, url]);
    const pp = `${prefix}_PORT_${p.port}_${proto.toUpperCase()}`;
    out.push([pp, url], [`${pp}_PROTO`, proto], [`${pp}_PORT`, String(p.port)], [`${pp}_ADDR`, ip]);
  });
  return out;
}

/**
 * The variables for a pod in `namespace`, from the services of that namespace and `default`
 * (others are ignored). A Service of the pod's own namespace named like a master service wins
 * over the master one, as in the kubelet. Services are taken in name order so the result is stable.
 */
export function serviceEnvVars(
  services: readonly Service[],
  namespace: string,
  enableServiceLinks: boolean,
): Map<string, string> {
  const picked = new Map<string, Service>();
  const withIP = services.filter(isServiceIPSet);
  for (const s of withIP) {
    const name = s.metadata?.name ?? '';
    if (s.metadata?.namespace === DEFAULT_NAMESPACE && MASTER_SERVICES.has(name)) picked.set(name, s);
  }
  if (enableServiceLinks)
    for (const s of withIP) if (s.metadata?.namespace === namespace) picked.set(s.metadata?.name ?? '', s);
  const out = new Map<string, string>();
  for (const name of [...picked.keys()].sort()) for (const [k, v] of serviceVars(picked.get(name)!)) out.set(k, v);
  return out;
}
