// Every request to the kubelet API goes through here: authenticated (401 otherwise), authorized for
// what its path maps to (403, or 500 when no decision could be made), and only then routed, so a
// caller who may not see pods learns nothing about which exist. Plain requests get a response;
// upgrade requests (exec, attach, port-forward) get their socket proxied.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { CountedLine } from '../../log/counted-line.js';
import type { Logger } from '../../log/logger.js';
import type { RuntimeService } from '../../cri/cri-types.js';
import type { RequestAuthenticator } from '../auth/authenticator.js';
import { authorizeRequest } from '../auth/authorize-request.js';
import type { Authorizer } from '../auth/subject-access-review.js';
import { ANONYMOUS, type UserInfo } from '../auth/user.js';
import { runHealthz, type HealthCheck } from '../healthz.js';
import { METRICS_CONTENT_TYPE } from '../metrics.js';
import { podList } from '../pod-list.js';
import type { ServerSource } from '../source.js';
import { renderResourceMetrics, RESOURCE_METRICS_CONTENT_TYPE } from '../stats/resource-metrics.js';
import type { StatsProvider } from '../stats/stats-provider.js';
import { rawReply } from '../streaming/raw-reply.js';
import { serveStream } from '../streaming/streaming-routes.js';
import { serveNodeLogs, type NodeLogDeps } from '../node-logs/node-log-handler.js';
import { serveContainerLogs } from './container-logs.js';
import { parseKubeletPath, type KubeletPath } from './kubelet-path.js';
import { HttpError, replyJson, replyText } from './reply.js';
import { errorMessage } from '../../util/error-message.js';

export interface KubeletHandlerDeps {
  source: ServerSource;
  runtime: RuntimeService;
  podLogsDir: string;
  stats: StatsProvider;
  configz(): unknown;
  /** /metrics: the agent's metrics in the Prometheus text format (shared with the read-only port). */
  metrics(): string | Promise<string>;
  checks: readonly HealthCheck[];
  enableDebuggingHandlers: boolean;
  /** /logs/: the node's log directory and the node log query. */
  nodeLogs: Omit<NodeLogDeps, 'logger'>;
  authenticator: RequestAuthenticator;
  authorizer: Authorizer;
  /** Told when a request authenticated (not as system:anonymous): its connection leaves the unauthenticated budget. */
  connections?: { authenticated(socket: Socket): void };
  logger: Logger;
}

const DEBUG_KINDS = new Set(['containerLogs', 'exec', 'attach', 'portForward', 'logs', 'unsupported-debug']);
const STREAM_KINDS = new Set(['exec', 'attach', 'portForward']);

/** The path as sent (not normalized: `..` must not be resolved away) and the query. */
function splitUrl(url: string | undefined): { path: string; query: URLSearchParams } {
  const u = url ?? '/';
  const q = u.indexOf('?');
  return { path: q < 0 ? u : u.slice(0, q), query: new URLSearchParams(q < 0 ? '' : u.slice(q + 1)) };
}

type Answer = (statusCode: number, body: string) => void;

export class KubeletHandler {
  /** Anyone can send a forged token or certificate: one line a minute, with the count. */
  private readonly unauthenticated: CountedLine;

  constructor(private readonly d: KubeletHandlerDeps) {
    this.unauthenticated = new CountedLine(d.logger, 'Unable to authenticate the request', { severity: 'info' });
  }

  /** Authentication and authorization; answers and returns undefined when the request may not go on. */
  private async admit(req: IncomingMessage, path: string, answer: Answer): Promise<UserInfo | undefined> {
    const authn = await this.d.authenticator.authenticate(req);
    if (!('user' in authn)) {
      if ('error' in authn) this.unauthenticated.hit({ err: authn.error, remote: req.socket.remoteAddress });
      answer(401, 'Unauthorized');
      return undefined;
    }
    if (authn.user.name !== ANONYMOUS.name) this.d.connections?.authenticated(req.socket);
    const verdict = await authorizeRequest(this.d.authorizer, authn.user, req.method ?? '', path);
    if (!verdict.allowed) {
      if (verdict.statusCode === 500)
        this.d.logger.error('Authorization error', { user: authn.user.name, path, err: verdict.cause });
      else this.d.logger.v(2).info('Forbidden', { user: authn.user.name, path });
      answer(verdict.statusCode, verdict.message);
      return undefined;
    }
    return authn.user;
  }

  async request(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { path, query } = splitUrl(req.url);
    const answer: Answer = (code, body) => replyText(res, code, body);
    try {
      if (!(await this.admit(req, path, answer))) return;
      const route = parseKubeletPath(path);
      if (!route) return answer(404, '404 page not found\n');
      if (DEBUG_KINDS.has(route.kind) && !this.d.enableDebuggingHandlers)
        return answer(405, 'Debug endpoints are disabled.\n');
      if (route.kind === 'unsupported-debug') return answer(404, '404 page not found\n');
      if (STREAM_KINDS.has(route.kind)) {
        if (req.method !== 'GET' && req.method !== 'POST') return answer(405, 'Method Not Allowed');
        return answer(400, 'Upgrade request required\n');
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') return answer(405, 'Method Not Allowed');
      await this.route(route, req, res, query);
    } catch (e) {
      this.fail(e, path, answer);
    }
  }

  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const { path, query } = splitUrl(req.url);
    const answer: Answer = (code, body) => rawReply(socket, code, body);
    socket.on('error', () => socket.destroy());
    try {
      const user = await this.admit(req, path, answer);
      if (!user) return;
      const route = parseKubeletPath(path);
      if (!route) return answer(404, '404 page not found\n');
      if (DEBUG_KINDS.has(route.kind) && !this.d.enableDebuggingHandlers)
        return answer(405, 'Debug endpoints are disabled.\n');
      if (route.kind !== 'exec' && route.kind !== 'attach' && route.kind !== 'portForward')
        return answer(400, 'this path does not accept an upgrade\n');
      if (req.method !== 'GET' && req.method !== 'POST') return answer(405, 'Method Not Allowed');
      await serveStream(route, req, socket, head, query, user.name, {
        runtime: this.d.runtime,
        statuses: () => this.d.source.statuses(),
        logger: this.d.logger,
      });
    } catch (e) {
      this.fail(e, path, answer);
    }
  }

  private fail(e: unknown, path: string, answer: Answer): void {
    if (e instanceof HttpError) return answer(e.statusCode, e.message);
    this.d.logger.error('Kubelet API request failed', { path, err: errorMessage(e) });
    answer(500, 'internal error\n');
  }

  private async route(
    route: KubeletPath,
    req: IncomingMessage,
    res: ServerResponse,
    query: URLSearchParams,
  ): Promise<void> {
    switch (route.kind) {
      case 'healthz': {
        const r = runHealthz(this.d.checks, route.check, query.has('verbose'));
        return replyText(res, r.statusCode, r.body);
      }
      case 'pods':
        return replyJson(res, 200, podList(this.d.source.statuses()));
      case 'metrics':
        return replyText(res, 200, await this.d.metrics(), METRICS_CONTENT_TYPE);
      case 'metrics/resource': {
        const summary = await this.d.stats.summary(true).catch((e: unknown) => {
          this.d.logger.warn('Error getting summary for the resource metrics endpoint', { err: errorMessage(e) });
          return undefined;
        });
        return replyText(res, 200, renderResourceMetrics(summary), RESOURCE_METRICS_CONTENT_TYPE);
      }
      case 'stats/summary': {
        const only = query.get('only_cpu_and_memory');
        return replyJson(res, 200, await this.d.stats.summary(only === 'true' || only === '1'));
      }
      case 'configz':
        return replyJson(res, 200, this.d.configz());
      case 'logs': {
        const url = req.url ?? '';
        const q = url.indexOf('?');
        return serveNodeLogs(route.path, q < 0 ? '' : url.slice(q + 1), req, res, {
          ...this.d.nodeLogs,
          logger: this.d.logger,
        });
      }
      case 'containerLogs':
        return serveContainerLogs(req, res, route.pod, route.container, query, {
          runtime: this.d.runtime,
          podLogsDir: this.d.podLogsDir,
          statuses: () => this.d.source.statuses(),
          logger: this.d.logger,
        });
      default:
        return replyText(res, 404, '404 page not found\n');
    }
  }
}
