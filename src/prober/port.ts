// A probe's port, given as a number or as the name of one of the container's ports.
import type { Container } from 'kubernetes-types/core/v1';

export type PortResult = { port: number } | { error: string };

export function resolveContainerPort(port: number | string | undefined, container: Container): PortResult {
  let n: number;
  if (typeof port === 'number') n = port;
  else if (typeof port === 'string') {
    // As the kubelet today: a string is a port name only, never a number in quotes.
    const named = (container.ports ?? []).find((p) => p.name === port);
    if (!named) return { error: `port ${JSON.stringify(port)} not found` };
    n = named.containerPort;
  } else return { error: 'probe has no port' };
  if (Number.isInteger(n) && n > 0 && n < 65536) return { port: n };
  return { error: `invalid port number: ${n}` };
}

/** host:port for a URL or a dial, with an IPv6 literal in brackets. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}
