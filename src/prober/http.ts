// httpGet probe with node:http / node:https, as the kubelet's prober does it: a fresh connection
// per probe (no keep-alive pool to go stale between probes), no proxy, no compression, TLS without
// verification, one deadline for the whole exchange including redirects and the body; 200-399 is
// success; redirects are followed on the same host only, and a redirect elsewhere is a success
// with a warning; at most 10 KiB of the body is read (pkg/probe/http's maxRespBodyLength) and up to
// 10 MiB of status line and headers, Go's http.Transport default (Node's own default, 16 KiB, made a
// server with 32 KiB of headers never ready). llhttp parses headers as they arrive, chunk by chunk,
// so even 10 MiB of them never holds the event loop for long.
import * as http from 'node:http';
import * as https from 'node:https';
import type { HTTPHeader } from 'kubernetes-types/core/v1';
import { describeSocketError } from './tcp.js';
import { joinHostPort } from './port.js';
import type { ProbeOutcome } from './types.js';
import { PROBE_USER_AGENT } from './user-agent.js';
import { errorMessage } from '../util/error-message.js';

export const MAX_HTTP_BODY_BYTES = 10 * 1024;
/** Go's http.Transport with MaxResponseHeaderBytes unset (the kubelet's prober leaves it so). */
export const MAX_HTTP_RESPONSE_HEADER_BYTES = 10 << 20;
const MAX_REDIRECTS = 10;
const REDIRECT_CODES = new Set([301, 302, 303, 307, 308]);

export interface HttpProbeRequest {
  scheme: 'http' | 'https';
  host: string;
  port: number;
  /** Path and optional query, as in `httpGet.path`. */
  path: string;
  headers: HTTPHeader[];
  timeoutMs: number;
}

export function probeUrl(scheme: 'http' | 'https', host: string, port: number, path: string): URL {
  const p = path === '' ? '/' : path.startsWith('/') ? path : `/${path}`;
  return new URL(`${scheme}://${joinHostPort(host, port)}${p}`);
}

type HeaderMap = Record<string, string | string[]>;

/** httpHeaders as sent, with the kubelet's User-Agent and Accept defaults; an empty Accept removes it. */
export function probeHeaders(list: HTTPHeader[]): HeaderMap {
  const out: HeaderMap = {};
  const key = new Map<string, string>();
  for (const h of list) {
    const lower = h.name.toLowerCase();
    const name = key.get(lower) ?? h.name;
    key.set(lower, name);
    const prev = out[name];
    out[name] = prev === undefined ? h.value : [...(Array.isArray(prev) ? prev : [prev]), h.value];
  }
  if (!key.has('user-agent')) out['User-Agent'] = PROBE_USER_AGENT;
  const accept = key.get('accept');
  if (accept === undefined) out['Accept'] = '*/*';
  else if ([out[accept]].flat().every((v) => v === '')) delete out[accept];
  const host = key.get('host');
  // Only one Host can be sent; as Go, the first value wins.
  if (host !== undefined) out[host] = [out[host]!].flat()[0]!;
  return out;
}

interface Response {
  status: number;
  location?: string;
  body: string;
}

class ProbeHttpError extends Error {}

function getOnce(url: URL, headers: HeaderMap, signal: AbortSignal): Promise<Response> {
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.get(
      url,
      { headers, agent: false, rejectUnauthorized: false, signal, maxHeaderSize: MAX_HTTP_RESPONSE_HEADER_BYTES },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let done = false;
        const finish = (): void => {
          if (done) return;
          done = true;
          const body = Buffer.concat(chunks, size).toString('utf8');
          resolve({ status: res.statusCode ?? 0, location: res.headers.location, body });
          // A truncated body is not an error: stop reading and drop the connection.
          res.destroy();
        };
        res.on('data', (c: Buffer) => {
          if (done) return;
          // Keep no more than the cap, whatever size the chunks come in.
          const keep = c.subarray(0, MAX_HTTP_BODY_BYTES - size);
          chunks.push(keep);
          size += keep.length;
          if (size >= MAX_HTTP_BODY_BYTES) finish();
        });
        res.once('end', finish);
        res.once('error', (err) => (done ? undefined : reject(err)));
      },
    );
    req.once('error', reject);
  });
}

function describeError(err: unknown, url: URL, timedOut: boolean): string {
  if (timedOut) return 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)';
  if (err instanceof ProbeHttpError) return err.message;
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'HPE_HEADER_OVERFLOW')
    return `net/http: server response headers exceeded ${MAX_HTTP_RESPONSE_HEADER_BYTES} bytes; aborted`;
  if (e && typeof e.code === 'string' && e.syscall === 'connect') {
    return `dial tcp ${url.host}: connect: ${describeSocketError(e)}`;
  }
  return errorMessage(err);
}

export async function runHttpProbe(req: HttpProbeRequest): Promise<ProbeOutcome> {
  const first = probeUrl(req.scheme, req.host, req.port, req.path);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, req.timeoutMs);
  let url = first;
  let headers = probeHeaders(req.headers);
  try {
    for (let redirects = 0; ; redirects++) {
      const res = await getOnce(url, headers, controller.signal);
      const next = REDIRECT_CODES.has(res.status) && res.location ? new URL(res.location, url) : undefined;
      if (next && next.hostname === first.hostname && (next.protocol === 'http:' || next.protocol === 'https:')) {
        if (redirects + 1 >= MAX_REDIRECTS) throw new ProbeHttpError(`stopped after ${MAX_REDIRECTS} redirects`);
        // As Go: a custom Host header survives only a relative redirect.
        if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(res.location!)) {
          headers = Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'host'));
        }
        url = next;
        continue;
      }
      if (res.status >= 200 && res.status < 400) {
        if (res.status >= 300)
          return { result: 'success', warning: true, output: `Probe terminated redirects, Response body: ${res.body}` };
        return { result: 'success', output: res.body };
      }
      // As the kubelet: never put the body of a failed response into the user-facing message.
      return { result: 'failure', output: `HTTP probe failed with statuscode: ${res.status}` };
    }
  } catch (err) {
    return { result: 'failure', output: `Get ${JSON.stringify(url.href)}: ${describeError(err, url, timedOut)}` };
  } finally {
    clearTimeout(timer);
  }
}
