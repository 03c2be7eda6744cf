// nodes/<name>/proxy/<path> as the API server serves it (the node's ProxyREST): the caller must be
// allowed `nodes/proxy` (checked before this, by the ordinary authorizer: the API server asks no
// finer question), then the request goes to the node's kubelet at its InternalIP and
// daemonEndpoints port with the API server's kubelet client certificate, and the kubelet's answer
// comes back as it is, status, body and encoding (so the kubelet authorizes the API server's
// identity, kube-apiserver-kubelet-client, not the caller's).
import { request } from 'node:https';
import type { Req, Res } from '../http.js';
import { ApiError } from '../status.js';
import type { ObjectStore } from '../store.js';
import { nodeEndpoint, type KubeletClientTls } from './node-endpoint.js';

/** Request headers the API server's proxy passes on (the caller's credentials are not among them). */
const PASSED_ON = ['accept', 'accept-encoding', 'content-type', 'user-agent'];

/** Resolves with the kubelet's status once its answer has been passed on (or the client left). */
export function proxyNode(
  store: ObjectStore,
  tls: KubeletClientTls,
  nodeName: string,
  path: string,
  query: string,
  req: Req,
  body: Buffer,
  res: Res,
): Promise<number> {
  // nodeEndpoint finds a pod's node; a node is its own.
  const ep = nodeEndpoint(store, { apiVersion: 'v1', kind: 'Pod', metadata: { name: nodeName }, spec: { nodeName } });
  const url = new URL(`https://${ep.host.includes(':') ? `[${ep.host}]` : ep.host}:${ep.port}`);
  url.pathname = path;
  url.search = query;
  const headers: Record<string, string> = {};
  for (const h of PASSED_ON) {
    const v = req.headers[h];
    if (typeof v === 'string') headers[h] = v;
  }
  return new Promise((resolve, reject) => {
    const up = request(
      url,
      {
        method: req.method ?? 'GET',
        headers,
        cert: tls.cert,
        key: tls.key,
        ca: tls.ca,
        rejectUnauthorized: tls.ca !== undefined,
        agent: false,
      },
      (kres) => {
        const code = kres.statusCode ?? 502;
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(kres.headers)) {
          if (typeof v === 'string' && !['connection', 'transfer-encoding', 'keep-alive'].includes(k)) out[k] = v;
        }
        res.writeHead(code, out);
        kres.pipe(res as unknown as NodeJS.WritableStream);
        kres.on('end', () => resolve(code));
        kres.on('error', () => {
          res.destroy?.();
          resolve(code);
        });
        res.on('close', () => {
          kres.destroy();
          resolve(code);
        });
      },
    );
    up.on('error', (e) =>
      reject(new ApiError(503, 'ServiceUnavailable', `error trying to reach service: ${e.message}`)),
    );
    up.end(body);
  });
}
