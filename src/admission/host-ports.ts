// The scheduler's nodeports Fits: a pod does not fit when one of its containers' host ports is
// already taken by an admitted pod on the same protocol and address, where an empty address or
// 0.0.0.0 takes the port on every address.
import type { Pod } from 'kubernetes-types/core/v1';

const ANY_ADDRESS = '0.0.0.0';

interface HostPort {
  readonly ip: string;
  readonly protocol: string;
  readonly port: number;
}

function hostPortsOf(pod: Pod): HostPort[] {
  const out: HostPort[] = [];
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort || p.hostPort <= 0) continue;
      out.push({ ip: p.hostIP || ANY_ADDRESS, protocol: p.protocol || 'TCP', port: p.hostPort });
    }
  }
  return out;
}

function clash(a: HostPort, b: HostPort): boolean {
  return (
    a.port === b.port && a.protocol === b.protocol && (a.ip === b.ip || a.ip === ANY_ADDRESS || b.ip === ANY_ADDRESS)
  );
}

/** The first taken host port the pod wants, if any. */
export function hostPortConflict(pod: Pod, others: readonly Pod[]): HostPort | undefined {
  const wanted = hostPortsOf(pod);
  if (wanted.length === 0) return undefined;
  for (const o of others) for (const taken of hostPortsOf(o)) for (const w of wanted) if (clash(w, taken)) return w;
  return undefined;
}
