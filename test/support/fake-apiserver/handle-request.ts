import { authenticate, type TokenTable } from './authn.js';
import { authorize, type Grants } from './authz.js';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { proxyNode } from './kubelet/node-proxy.js';
import { proxyPodLog } from './kubelet/pod-log.js';
import { kubeletStreamUrl, proxyPodStream } from './kubelet/pod-stream.js';
import type { KubeletClientTls } from './kubelet/node-endpoint.js';
import type { MetricsApi } from './metrics-api.js';
import { POD_PROXY_SUBRESOURCES } from './resources.js';
import { subjectAccessReview, tokenReview, type ReviewRecord } from './reviews.js';
import { isObject, type JsonObject } from './types.js';
import type { Chaos } from './chaos.js';
import { header, readBody, sendJson, tlsSocketOf, type Req, type Res } from './http.js';
import { serveNonResource } from './nonresource.js';
import { parseRequest } from './request-info.js';
import { dispatchResource, type WatchRegistry } from './rest/dispatch.js';
import { ApiError, badRequest, methodNotAllowed, pathNotFound, unauthorized } from './status.js';
import type { ObjectStore } from './store.js';
import type { Json } from './types.js';
import type { TokenIssuer } from './tokens/token-request.js';

export interface RequestRecord {
  method: string;
  path: string;
  query: string;
  user: string;
  /** 0 while unanswered (hung, or a watch still streaming). */
  status: number;
  verb: string;
  protocol: string;
  userAgent: string;
  /** SHA-256 fingerprint of the client certificate presented on the connection ('' = none). */
  clientCert: string;
  /** The TLS connection it came over (FakeApiServer.connections[].id; 0 = unknown). */
  connection: number;
  accept: string;
  contentType: string;
  /** performance.now() when the request came in, and when its response closed (undefined while open). */
  receivedAt: number;
  closedAt?: number;
}

/** The id FakeApiServer put on the connection's TLS socket (server.ts CONNECTION_ID). */
function connectionOf(socket: unknown): number {
  const id = (socket as Record<symbol, unknown> | undefined)?.[Symbol.for('fake-apiserver connection id')];
  return typeof id === 'number' ? id : 0;
}

export interface HandlerDeps {
  store: ObjectStore;
  chaos: Chaos;
  tokens: TokenTable;
  serverAddress: string;
  log(r: RequestRecord): void;
  /** Keeps a request that will never be answered (hang mode). */
  park(res: Res): void;
  watches: WatchRegistry;
  grants: Grants;
  /** The API server's kubelet client certificate (and the CA to check kubelets with, if any). */
  kubeletTls(): KubeletClientTls;
  metrics: MetricsApi;
  reviewed(r: ReviewRecord): void;
  tokenIssuer: TokenIssuer;
  serviceAccountAdmission: boolean;
}

/** One request through the chain kube-apiserver applies: authn, faults, authz, then discovery or REST. */
export async function handleRequest(deps: HandlerDeps, req: Req, res: Res): Promise<void> {
  const method = req.method ?? 'GET';
  const url = new URL(req.url ?? '/', 'https://fake');
  const accept = header(req, 'accept') ?? '';
  const contentType = header(req, 'content-type') ?? '';
  const record: RequestRecord = {
    method,
    path: url.pathname,
    query: url.search.replace(/^\?/, ''),
    user: '',
    status: 0,
    verb: '',
    protocol: req.httpVersion === '2.0' ? 'HTTP/2' : `HTTP/${req.httpVersion}`,
    userAgent: header(req, 'user-agent') ?? '',
    clientCert: tlsSocketOf(req)?.getPeerCertificate?.()?.fingerprint256 ?? '',
    connection: connectionOf(req.socket),
    accept,
    contentType,
    receivedAt: performance.now(),
  };
  deps.log(record);
  res.on('close', () => (record.closedAt = performance.now()));
  const reply = (status: number, body: Json, headers: Record<string, string> = {}, ct?: string): void => {
    record.status = status;
    sendJson(res, status, body, headers, ct);
  };
  try {
    const user = authenticate(tlsSocketOf(req), header(req, 'authorization'), deps.tokens);
    record.user = user?.name ?? '';
    if (deps.chaos.latencyMs > 0) await new Promise((r) => setTimeout(r, deps.chaos.latencyMs));
    if (deps.chaos.hanging) return deps.park(res);
    const rawBody = await readBody(req);
    if (!user) throw unauthorized();
    const failure = deps.chaos.takeFailure(record);
    if (failure) throw failure;
    const info = parseRequest(method, req.url ?? '/');
    record.verb = info.kind === 'resource' ? info.verb : method.toLowerCase();
    const denied = authorize(user, info, deps.grants, deps.store);
    if (denied) throw denied;
    if (info.kind === 'unknown-resource') throw pathNotFound();
    if (info.kind === 'resource' && info.rt.group === 'metrics.k8s.io') {
      if (info.verb !== 'get' && info.verb !== 'list') throw methodNotAllowed();
      return reply(200, await deps.metrics.serve(info.rt.resource as 'nodes' | 'pods', info.namespace, info.name));
    }
    if (
      info.kind === 'resource' &&
      (info.rt.resource === 'tokenreviews' || info.rt.resource === 'subjectaccessreviews')
    ) {
      if (info.verb !== 'create') throw methodNotAllowed();
      let body: unknown;
      try {
        body = JSON.parse(rawBody.toString('utf8'));
      } catch {
        throw badRequest('the review is not JSON');
      }
      if (!isObject(body)) throw badRequest('the review is not an object');
      if (info.rt.resource === 'tokenreviews') {
        const review = tokenReview(body, deps.tokens);
        deps.reviewed({
          kind: 'TokenReview',
          by: user.name,
          spec: {},
          allowed: (review.status as JsonObject).authenticated === true,
        });
        return reply(201, review);
      }
      const { review, allowed } = subjectAccessReview(body, deps.grants, deps.store);
      deps.reviewed({ kind: 'SubjectAccessReview', by: user.name, spec: review.spec as JsonObject, allowed });
      return reply(201, review);
    }
    if (info.kind === 'resource' && info.rt.resource === 'nodes' && info.proxyPath !== undefined) {
      record.status = await proxyNode(
        deps.store,
        deps.kubeletTls(),
        info.name,
        info.proxyPath,
        url.search.replace(/^\?/, ''),
        req,
        rawBody,
        res,
      );
      return;
    }
    if (info.kind === 'resource' && info.rt.resource === 'pods' && POD_PROXY_SUBRESOURCES.includes(info.subresource)) {
      if (info.subresource !== 'log') throw badRequest('Upgrade request required');
      if (info.verb !== 'get') throw methodNotAllowed();
      record.status = await proxyPodLog(deps.store, deps.kubeletTls(), info.namespace, info.name, info.query, res);
      return;
    }
    if (info.kind === 'nonresource') {
      if (deps.chaos.notReady && /^\/readyz\/?$/.test(info.path)) {
        record.status = 500;
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('[-]poststarthook/rbac/bootstrap-roles failed: not finished\nreadyz check failed\n');
        return;
      }
      const r = serveNonResource(info.path, accept, deps.serverAddress);
      if (typeof r.body !== 'string') return reply(r.status, r.body, {}, r.contentType);
      record.status = r.status;
      res.writeHead(r.status, { 'Content-Type': r.contentType });
      res.end(r.body);
      return;
    }
    const result = dispatchResource(
      {
        store: deps.store,
        user,
        req: info,
        rawBody: rawBody.toString('utf8'),
        rawBytes: rawBody,
        contentType,
        accept,
        res,
        chaos: deps.chaos,
        tokenIssuer: deps.tokenIssuer,
        serviceAccountAdmission: deps.serviceAccountAdmission,
      },
      (end) => {
        record.status = 200;
        return deps.watches(end);
      },
    );
    if (result) reply(result.status, result.body);
  } catch (e) {
    if (e instanceof ApiError) reply(e.code, e.toStatus(), e.headers);
    else reply(500, new ApiError(500, 'InternalError', `Internal error occurred: ${(e as Error).message}`).toStatus());
  }
}

/** An upgrade request (exec, attach, portforward from kubectl): authenticated, authorized, proxied to the node. */
export async function handleUpgrade(
  deps: HandlerDeps,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  const method = req.method ?? 'GET';
  const url = new URL(req.url ?? '/', 'https://fake');
  const record: RequestRecord = {
    method,
    path: url.pathname,
    query: url.search.replace(/^\?/, ''),
    user: '',
    status: 0,
    verb: '',
    protocol: `HTTP/${req.httpVersion} upgrade ${String(req.headers.upgrade ?? '')}`,
    userAgent: String(req.headers['user-agent'] ?? ''),
    clientCert: tlsSocketOf(req as unknown as Req)?.getPeerCertificate?.()?.fingerprint256 ?? '',
    connection: connectionOf(req.socket),
    accept: String(req.headers.accept ?? ''),
    contentType: '',
    receivedAt: performance.now(),
  };
  deps.log(record);
  const fail = (e: unknown): void => {
    const err =
      e instanceof ApiError
        ? e
        : new ApiError(500, 'InternalError', `Internal error occurred: ${(e as Error).message}`);
    record.status = err.code;
    const text = JSON.stringify(err.toStatus()) + '\n';
    socket.end(
      `HTTP/1.1 ${err.code} ${err.reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  };
  socket.on('error', () => socket.destroy());
  try {
    const user = authenticate(
      tlsSocketOf(req as unknown as Req),
      header(req as unknown as Req, 'authorization'),
      deps.tokens,
    );
    record.user = user?.name ?? '';
    if (!user) throw unauthorized();
    const info = parseRequest(method, req.url ?? '/');
    if (
      info.kind !== 'resource' ||
      info.rt.resource !== 'pods' ||
      !['exec', 'attach', 'portforward'].includes(info.subresource)
    )
      throw badRequest('this path does not accept an upgrade');
    record.verb = info.verb;
    const denied = authorize(user, info, deps.grants, deps.store);
    if (denied) throw denied;
    const target = kubeletStreamUrl(deps.store, info);
    const proxied = await proxyPodStream(target, deps.kubeletTls(), req, socket, head);
    record.status = proxied.statusCode;
    await proxied.ended;
  } catch (e) {
    fail(e);
  }
}
