// /exec, /attach and /portForward: the request is checked (pod, container, options), the runtime is
// asked for a streaming URL (CRI Exec, Attach, PortForward) and the client's upgraded connection is
// proxied to it. Only upgrade requests (SPDY or WebSocket) are served, as the kubelet requires.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../log/logger.js';
import { CriError, type RuntimeService } from '../../cri/cri-types.js';
import type { PodStatusEntry } from '../../status/status-manager.js';
import type { KubeletPath } from '../kubelet/kubelet-path.js';
import { findPod, requireContainer, runningContainerId } from '../kubelet/pod-lookup.js';
import { HttpError } from '../kubelet/reply.js';
import { execCommand, isWebSocketRequest, portForwardPorts, remoteCommandOptions } from './stream-options.js';
import { proxyUpgrade } from './upgrade-proxy.js';

export interface StreamingDeps {
  runtime: RuntimeService;
  statuses(): readonly PodStatusEntry[];
  logger: Logger;
}

type StreamingPath = Extract<KubeletPath, { kind: 'exec' | 'attach' | 'portForward' }>;

/** Only the loopback or this host's streaming server: the URL is the runtime's answer, still checked. */
function runtimeUrl(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new HttpError(500, 'the runtime returned a streaming URL that does not parse');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new HttpError(500, `the runtime returned a streaming URL with scheme ${u.protocol}`);
  return u;
}

function criFailure(e: unknown): never {
  if (e instanceof CriError) throw new HttpError(e.notFound ? 404 : 500, e.details);
  throw e;
}

/** Resolves the runtime URL for the request, or throws an HttpError to answer instead. */
async function streamUrl(
  route: StreamingPath,
  req: IncomingMessage,
  query: URLSearchParams,
  d: StreamingDeps,
): Promise<{ url: URL; what: Record<string, string> }> {
  const entry = findPod(d.statuses(), route.pod);
  const pod = `${route.pod.namespace}/${route.pod.name}`;
  if (route.kind === 'portForward') {
    const ports = portForwardPorts(query, isWebSocketRequest(req.headers));
    const sandbox = entry.runtime?.sandboxes[0]?.id;
    if (!sandbox) throw new HttpError(400, `pod "${route.pod.name}" has no running sandbox`);
    const url = await d.runtime.portForward(sandbox, ports).catch(criFailure);
    return { url: runtimeUrl(url), what: { pod, ports: ports.join(',') } };
  }
  requireContainer(entry, route.container);
  const opts = remoteCommandOptions(query);
  const containerId = runningContainerId(entry, route.container);
  if (route.kind === 'exec') {
    const cmd = execCommand(query);
    const url = await d.runtime.exec({ containerId, cmd, ...opts }).catch(criFailure);
    return {
      url: runtimeUrl(url),
      what: { pod, container: route.container, tty: String(opts.tty), stdin: String(opts.stdin) },
    };
  }
  const url = await d.runtime.attach({ containerId, ...opts }).catch(criFailure);
  return {
    url: runtimeUrl(url),
    what: { pod, container: route.container, tty: String(opts.tty), stdin: String(opts.stdin) },
  };
}

/** Serves an upgrade request; throws HttpError (to be written on the socket) when it cannot start. */
export async function serveStream(
  route: StreamingPath,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  query: URLSearchParams,
  user: string,
  d: StreamingDeps,
): Promise<void> {
  const { url, what } = await streamUrl(route, req, query, d);
  const protocol = isWebSocketRequest(req.headers) ? 'websocket' : (req.headers.upgrade ?? '').toString();
  const started = Date.now();
  const result = await proxyUpgrade(req, socket, head, url);
  if (result.statusCode !== 101) {
    d.logger
      .v(2)
      .info('The runtime refused the stream', { kind: route.kind, ...what, user, protocol, status: result.statusCode });
    return;
  }
  d.logger.info(`Streaming ${route.kind}`, { ...what, user, protocol });
  await result.ended;
  d.logger
    .v(2)
    .info(`Streaming ${route.kind} ended`, { ...what, user, seconds: Math.round((Date.now() - started) / 100) / 10 });
}
