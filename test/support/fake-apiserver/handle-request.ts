import { authenticate, type TokenTable } from './authn.js';
import { authorize } from './authz.js';
import type { Chaos } from './chaos.js';
import { header, readBody, sendJson, tlsSocketOf, type Req, type Res } from './http.js';
import { serveNonResource } from './nonresource.js';
import { parseRequest } from './request-info.js';
import { dispatchResource, type WatchRegistry } from './rest/dispatch.js';
import { ApiError, pathNotFound, unauthorized } from './status.js';
import type { ObjectStore } from './store.js';
import type { Json } from './types.js';

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
  accept: string;
  contentType: string;
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
    accept,
    contentType,
  };
  deps.log(record);
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
    const denied = authorize(user, info);
    if (denied) throw denied;
    if (info.kind === 'unknown-resource') throw pathNotFound();
    if (info.kind === 'nonresource') {
      const r = serveNonResource(info.path, accept, deps.serverAddress);
      if (typeof r.body !== 'string') return reply(r.status, r.body, {}, r.contentType);
      record.status = r.status;
      res.writeHead(r.status, { 'Content-Type': r.contentType });
      res.end(r.body);
      return;
    }
    const result = dispatchResource({ store: deps.store, user, req: info, rawBody: rawBody.toString('utf8'), rawBytes: rawBody, contentType, accept, res, chaos: deps.chaos }, (end) => {
      record.status = 200;
      return deps.watches(end);
    });
    if (result) reply(result.status, result.body);
  } catch (e) {
    if (e instanceof ApiError) reply(e.code, e.toStatus(), e.headers);
    else reply(500, new ApiError(500, 'InternalError', `Internal error occurred: ${(e as Error).message}`).toStatus());
  }
}
