// pods/exec, pods/attach and pods/portforward as an API server without stream translation proxies
// them: the upgrade request goes to the node's kubelet (/exec/<ns>/<pod>/<container>?command=..&
// input=1&output=1&error=1&tty=1, /attach/..., /portForward/<ns>/<pod>) with the API server's kubelet
// client certificate, and the upgraded connection (SPDY, or WebSocket when the far end accepts it)
// is spliced through. kubectl 1.32 tries WebSocket first and falls back to SPDY when the upgrade
// is refused, as it does against any API server that does not translate.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { proxyUpgrade } from '../../../../src/server/streaming/upgrade-proxy.js';
import type { ResourceRequest } from '../request-info.js';
import type { ObjectStore } from '../store.js';
import { badRequest } from '../status.js';
import { containerOf, nodeEndpoint, podOf, type KubeletClientTls } from './node-endpoint.js';

const flag = (q: URLSearchParams, name: string): boolean => ['true', '1'].includes(q.get(name) ?? '');

/** The kubelet URL a pods/<sub> request is proxied to (streamLocation / PortForwardLocation). */
export function kubeletStreamUrl(store: ObjectStore, info: ResourceRequest): URL {
  const pod = podOf(store, info.namespace, info.name);
  const ep = nodeEndpoint(store, pod);
  const base = `https://${ep.host.includes(':') ? `[${ep.host}]` : ep.host}:${ep.port}`;
  const q = info.query;
  const out = new URLSearchParams();
  if (info.subresource === 'portforward') {
    for (const p of q.getAll('ports')) for (const one of p.split(',')) out.append('port', one);
    const u = new URL(`${base}/portForward/${info.namespace}/${info.name}`);
    u.search = out.toString();
    return u;
  }
  const container = containerOf(pod, q.get('container') ?? '');
  if (info.subresource === 'exec') {
    const cmd = q.getAll('command');
    if (cmd.length === 0) throw badRequest('you must specify at least one command for the container');
    for (const c of cmd) out.append('command', c);
  }
  if (flag(q, 'stdin')) out.set('input', '1');
  if (flag(q, 'stdout')) out.set('output', '1');
  if (flag(q, 'stderr')) out.set('error', '1');
  if (flag(q, 'tty')) out.set('tty', '1');
  const u = new URL(`${base}/${info.subresource}/${info.namespace}/${info.name}/${container}`);
  u.search = out.toString();
  return u;
}

/** Resolves with the kubelet's answer (101 when upgraded) and when the stream has ended. */
export function proxyPodStream(
  url: URL,
  tls: KubeletClientTls,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<{ statusCode: number; ended: Promise<void> }> {
  return proxyUpgrade(req, socket, head, url, {
    cert: tls.cert,
    key: tls.key,
    ca: tls.ca,
    rejectUnauthorized: tls.ca !== undefined,
  });
}
