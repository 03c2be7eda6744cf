// pods/log as the API server serves it: the pod's node is asked for /containerLogs with the
// PodLogOptions re-encoded, over TLS with the API server's kubelet client certificate, and the
// answer is streamed back as it comes (follow included); a kubelet error becomes a Status.
import { request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { Res } from '../http.js';
import { ApiError } from '../status.js';
import type { ObjectStore } from '../store.js';
import { containerOf, nodeEndpoint, podOf, type KubeletClientTls } from './node-endpoint.js';

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  422: 'Invalid',
};
const BOOL = ['follow', 'previous', 'timestamps', 'insecureSkipTLSVerifyBackend'];
const VALUES = ['tailLines', 'limitBytes', 'sinceSeconds', 'sinceTime'];

function readBody(res: IncomingMessage, max = 64 * 1024): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    res.on('data', (c: Buffer) => {
      if (text.length < max) text += c.toString('utf8');
    });
    res.on('end', () => resolve(text));
    res.on('error', () => resolve(text));
  });
}

export function kubeletLogQuery(q: URLSearchParams): URLSearchParams {
  const out = new URLSearchParams();
  for (const b of BOOL) if (['true', '1'].includes(q.get(b) ?? '')) out.set(b, 'true');
  for (const v of VALUES) {
    const x = q.get(v);
    if (x !== null && x !== '') out.set(v, x);
  }
  return out;
}

/** Resolves once the answer is complete (or the client left). Throws ApiError before anything is written. */
export function proxyPodLog(
  store: ObjectStore,
  tls: KubeletClientTls,
  namespace: string,
  name: string,
  query: URLSearchParams,
  res: Res,
): Promise<number> {
  const pod = podOf(store, namespace, name);
  const container = containerOf(pod, query.get('container') ?? '');
  const ep = nodeEndpoint(store, pod);
  const url = new URL(
    `https://${ep.host.includes(':') ? `[${ep.host}]` : ep.host}:${ep.port}/containerLogs/${namespace}/${name}/${container}`,
  );
  url.search = kubeletLogQuery(query).toString();
  return new Promise((resolve, reject) => {
    const up = request(
      url,
      {
        method: 'GET',
        cert: tls.cert,
        key: tls.key,
        ca: tls.ca,
        rejectUnauthorized: tls.ca !== undefined,
        agent: false,
      },
      (kres) => {
        const code = kres.statusCode ?? 500;
        if (code !== 200) {
          void readBody(kres).then((text) =>
            reject(new ApiError(code, REASONS[code] ?? 'InternalError', text.trim() || `the kubelet answered ${code}`)),
          );
          return;
        }
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private' });
        const out = res as unknown as NodeJS.WritableStream;
        kres.pipe(out);
        kres.on('end', () => resolve(200));
        kres.on('error', () => {
          res.destroy?.();
          resolve(200);
        });
        res.on('close', () => {
          kres.destroy();
          resolve(200);
        });
      },
    );
    up.on('error', (e) => reject(new ApiError(500, 'InternalError', `Get "${url.toString()}": ${e.message}`)));
    up.end();
  });
}
