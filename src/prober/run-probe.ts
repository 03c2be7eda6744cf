// One probe execution for a container: picks the handler from the probe's action, fills in what
// the pod provides (pod IP, named ports, env for the command), and retries a probe that could not
// be run (as the kubelet, up to 3 times; failures are never retried).
import type { Container, Probe } from 'kubernetes-types/core/v1';
import type { RuntimeService } from '../cri/cri-types.js';
import { expandProbeCommand, runExecProbe } from './exec.js';
import { runGrpcProbe } from './grpc.js';
import { runHttpProbe, type HttpProbeRequest } from './http.js';
import { resolveContainerPort } from './port.js';
import { runTcpProbe } from './tcp.js';
import type { ProbeOutcome } from './types.js';
import { errorMessage } from '../util/error-message.js';

export const MAX_PROBE_ATTEMPTS = 3;

/** The handlers, replaceable in tests. */
export interface ProbeHandlers {
  exec(containerId: string, command: string[], timeoutSeconds: number): Promise<ProbeOutcome>;
  http(req: HttpProbeRequest): Promise<ProbeOutcome>;
  tcp(host: string, port: number, timeoutMs: number): Promise<ProbeOutcome>;
  grpc(host: string, port: number, service: string, timeoutMs: number): Promise<ProbeOutcome>;
}

export function realHandlers(runtime: Pick<RuntimeService, 'execSync'>): ProbeHandlers {
  return {
    exec: (id, cmd, t) => runExecProbe(runtime, id, cmd, t),
    http: runHttpProbe,
    tcp: runTcpProbe,
    grpc: runGrpcProbe,
  };
}

export interface ProbeTarget {
  container: Container;
  containerId: string;
  /** The pod IP; for host-network pods the node IP. */
  podIP: string;
}

/**
 * With no pod IP (standalone mode in the kubelet) the kubelet dials ":port", which Go resolves to
 * the local host; the same here.
 */
function hostOr(host: string | undefined, podIP: string): string {
  return host || podIP || '127.0.0.1';
}

function runOnce(h: ProbeHandlers, probe: Probe, t: ProbeTarget, timeoutSeconds: number): Promise<ProbeOutcome> {
  const timeoutMs = timeoutSeconds * 1000;
  if (probe.exec)
    return h.exec(t.containerId, expandProbeCommand(probe.exec.command ?? [], t.container), timeoutSeconds);
  if (probe.httpGet) {
    const g = probe.httpGet;
    const port = resolveContainerPort(g.port, t.container);
    if ('error' in port) return Promise.resolve({ result: 'unknown', output: port.error });
    const scheme = (g.scheme ?? 'HTTP').toLowerCase() === 'https' ? 'https' : 'http';
    return h.http({
      scheme,
      host: hostOr(g.host, t.podIP),
      port: port.port,
      path: g.path ?? '/',
      headers: g.httpHeaders ?? [],
      timeoutMs,
    });
  }
  if (probe.tcpSocket) {
    const port = resolveContainerPort(probe.tcpSocket.port, t.container);
    if ('error' in port) return Promise.resolve({ result: 'unknown', output: port.error });
    return h.tcp(hostOr(probe.tcpSocket.host, t.podIP), port.port, timeoutMs);
  }
  if (probe.grpc) {
    const port = resolveContainerPort(probe.grpc.port, t.container);
    if ('error' in port) return Promise.resolve({ result: 'unknown', output: port.error });
    return h.grpc(hostOr(undefined, t.podIP), port.port, probe.grpc.service ?? '', timeoutMs);
  }
  return Promise.resolve({ result: 'unknown', output: `missing probe handler for container ${t.container.name}` });
}

export async function runProbe(
  h: ProbeHandlers,
  probe: Probe,
  target: ProbeTarget,
  timeoutSeconds: number,
): Promise<ProbeOutcome> {
  let last: ProbeOutcome = { result: 'unknown', output: '' };
  for (let i = 0; i < MAX_PROBE_ATTEMPTS; i++) {
    try {
      last = await runOnce(h, probe, target, timeoutSeconds);
    } catch (err) {
      last = { result: 'unknown', output: errorMessage(err) };
    }
    if (last.result !== 'unknown') return last;
  }
  return last;
}
