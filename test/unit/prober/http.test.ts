// The httpGet handler against real local HTTP(S) servers.
import type * as http from 'node:http';
import * as net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_HTTP_BODY_BYTES,
  MAX_HTTP_RESPONSE_HEADER_BYTES,
  probeHeaders,
  runHttpProbe,
  type HttpProbeRequest,
} from '../../../src/prober/http.js';
import { PROBE_USER_AGENT } from '../../../src/prober/user-agent.js';
import { useTmpDir } from '../../support/tmp.js';
import { selfSignedCert, startHttp, startHttps, type Listening } from './servers.js';

const tmp = useTmpDir('prober-http');
const seen: http.IncomingHttpHeaders[] = [];
const seenPaths: string[] = [];
let srv: Listening;
let tls: Listening;
let stalled: net.Server;
let stalledPort = 0;
const stalledSockets = new Set<net.Socket>();
let endlessHeaders: net.Server;
let endlessHeadersPort = 0;
const endlessSockets = new Set<net.Socket>();

/** Answers 200 and then header lines without end, 64 KiB per turn of its loop, until the client goes. */
function sendEndlessHeaders(s: net.Socket): void {
  endlessSockets.add(s);
  let open = true;
  s.on('close', () => {
    open = false;
    endlessSockets.delete(s);
  });
  s.on('error', () => {});
  s.once('data', () => {
    s.write('HTTP/1.1 200 OK\r\n');
    const line = `X-Pad: ${'p'.repeat(1010)}\r\n`;
    const more = (): void => {
      if (!open) return;
      if (s.write(line.repeat(64))) setImmediate(more);
      else s.once('drain', more);
    };
    more();
  });
}

function route(req: http.IncomingMessage, res: http.ServerResponse): void {
  seen.push(req.headers);
  seenPaths.push(req.url ?? '');
  const url = new URL(req.url ?? '/', 'http://x');
  switch (url.pathname) {
    case '/ok':
      res.end('fine');
      return;
    case '/created':
      res.writeHead(201).end();
      return;
    case '/notfound':
      res.writeHead(404).end('secret body');
      return;
    case '/error':
      res.writeHead(503).end('down');
      return;
    case '/big':
      res.writeHead(200).end('x'.repeat(MAX_HTTP_BODY_BYTES * 5));
      return;
    case '/endless': {
      // Streams forever: the probe must stop reading at the cap and still succeed.
      res.writeHead(200);
      const t = setInterval(() => res.write('y'.repeat(4096)), 1);
      res.on('close', () => clearInterval(t));
      return;
    }
    case '/slow':
      setTimeout(() => res.end('late'), 3000).unref();
      return;
    case '/redirect-local':
      res.writeHead(302, { location: '/ok' }).end();
      return;
    case '/redirect-loop':
      res.writeHead(302, { location: '/redirect-loop' }).end();
      return;
    case '/redirect-other':
      res.writeHead(302, { location: 'http://other.invalid:1/x' }).end('<a>Found</a>');
      return;
    case '/redirect-fail':
      res.writeHead(301, { location: '/notfound' }).end();
      return;
    case '/host':
      res.writeHead(req.headers.host === 'probe.example' ? 200 : 400).end(req.headers.host);
      return;
    case '/headers-32k':
      res.writeHead(200, { 'X-Big': 'h'.repeat(32 * 1024) }).end('big headers');
      return;
    case '/no-location':
      res.writeHead(302).end();
      return;
    default:
      res.writeHead(500).end();
  }
}

beforeAll(async () => {
  srv = await startHttp(route);
  tls = await startHttps(selfSignedCert(tmp), route);
  // Accepts connections and never answers.
  stalled = net.createServer((s) => {
    stalledSockets.add(s);
    s.on('close', () => stalledSockets.delete(s));
  });
  await new Promise<void>((r) => stalled.listen(0, '127.0.0.1', () => r()));
  stalledPort = (stalled.address() as net.AddressInfo).port;
  endlessHeaders = net.createServer(sendEndlessHeaders);
  await new Promise<void>((r) => endlessHeaders.listen(0, '127.0.0.1', () => r()));
  endlessHeadersPort = (endlessHeaders.address() as net.AddressInfo).port;
});

afterAll(async () => {
  await srv?.close();
  await tls?.close();
  for (const s of stalledSockets) s.destroy();
  await new Promise<void>((r) => (stalled ? stalled.close(() => r()) : r()));
  for (const s of endlessSockets) s.destroy();
  await new Promise<void>((r) => (endlessHeaders ? endlessHeaders.close(() => r()) : r()));
});

function req(path: string, more: Partial<HttpProbeRequest> = {}): HttpProbeRequest {
  return { scheme: 'http', host: '127.0.0.1', port: srv.port, path, headers: [], timeoutMs: 1000, ...more };
}

describe('httpGet probe', () => {
  it('succeeds on 2xx with the body as output', async () => {
    expect(await runHttpProbe(req('/ok'))).toEqual({ result: 'success', output: 'fine' });
    expect((await runHttpProbe(req('/created'))).result).toBe('success');
  });

  it('fails on 4xx and 5xx with the status code, never the body', async () => {
    expect(await runHttpProbe(req('/notfound'))).toEqual({
      result: 'failure',
      output: 'HTTP probe failed with statuscode: 404',
    });
    expect(await runHttpProbe(req('/error'))).toEqual({
      result: 'failure',
      output: 'HTTP probe failed with statuscode: 503',
    });
  });

  it("sends the kubelet's User-Agent and Accept, and no keep-alive", async () => {
    seen.length = 0;
    await runHttpProbe(req('/ok'));
    expect(seen[0]!['user-agent']).toBe(PROBE_USER_AGENT);
    expect(PROBE_USER_AGENT).toMatch(/^kube-probe\/\d+\.\d+$/);
    expect(seen[0]!['accept']).toBe('*/*');
    expect(seen[0]!['connection']).toBe('close');
    expect(seen[0]!['accept-encoding']).toBeUndefined();
  });

  it('sends httpHeaders, repeated ones too, and lets them replace the defaults', async () => {
    seen.length = 0;
    await runHttpProbe(
      req('/ok', {
        headers: [
          { name: 'X-Custom', value: 'a' },
          { name: 'x-custom', value: 'b' },
          { name: 'User-Agent', value: 'mine' },
          { name: 'Accept', value: '' },
        ],
      }),
    );
    expect(seen[0]!['x-custom']).toBe('a, b');
    expect(seen[0]!['user-agent']).toBe('mine');
    expect(seen[0]!['accept']).toBeUndefined();
  });

  it('uses a Host header as the request host', async () => {
    expect(await runHttpProbe(req('/host', { headers: [{ name: 'Host', value: 'probe.example' }] }))).toEqual({
      result: 'success',
      output: 'probe.example',
    });
    expect((await runHttpProbe(req('/host'))).result).toBe('failure');
  });

  it('keeps the query string and adds a missing leading slash', async () => {
    seenPaths.length = 0;
    await runHttpProbe(req('ok?verbose=1'));
    expect(seenPaths).toEqual(['/ok?verbose=1']);
  });

  it('reads at most 10 KiB of the body, even of an endless one', async () => {
    const big = await runHttpProbe(req('/big'));
    expect(big.result).toBe('success');
    expect(big.output.length).toBe(MAX_HTTP_BODY_BYTES);
    const endless = await runHttpProbe(req('/endless', { timeoutMs: 5000 }));
    expect(endless.result).toBe('success');
    expect(endless.output.length).toBe(MAX_HTTP_BODY_BYTES);
  });

  it("takes response headers up to Go's 10 MiB (Node's default is 16 KiB), and fails beyond with Go's words", async () => {
    expect(MAX_HTTP_RESPONSE_HEADER_BYTES).toBe(10 * 1024 * 1024);
    expect(await runHttpProbe(req('/headers-32k'))).toEqual({ result: 'success', output: 'big headers' });
    // Headers that never end: the probe gives up at the limit, long before its deadline, and the
    // event loop keeps turning meanwhile (a timer set beside it fires while the headers arrive).
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    const r = await runHttpProbe(req('/', { port: endlessHeadersPort, timeoutMs: 60_000 }));
    clearInterval(ticker);
    expect(r).toEqual({
      result: 'failure',
      output: `Get "http://127.0.0.1:${endlessHeadersPort}/": net/http: server response headers exceeded 10485760 bytes; aborted`,
    });
    expect(ticks).toBeGreaterThan(0);
  });

  it('fails when the server does not answer within the timeout', async () => {
    const slow = await runHttpProbe(req('/slow'));
    expect(slow.result).toBe('failure');
    expect(slow.output).toMatch(/^Get "http:\/\/127\.0\.0\.1:\d+\/slow": context deadline exceeded/);
    const silent = await runHttpProbe(req('/', { port: stalledPort }));
    expect(silent.result).toBe('failure');
    expect(silent.output).toMatch(/deadline exceeded/);
  });

  it('fails with the dial error when nothing listens', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const r = await runHttpProbe(req('/', { port: closed }));
    expect(r).toEqual({
      result: 'failure',
      output: `Get "http://127.0.0.1:${closed}/": dial tcp 127.0.0.1:${closed}: connect: connection refused`,
    });
  });

  it('follows redirects on the same host, up to 10', async () => {
    expect(await runHttpProbe(req('/redirect-local'))).toEqual({ result: 'success', output: 'fine' });
    expect(await runHttpProbe(req('/redirect-fail'))).toEqual({
      result: 'failure',
      output: 'HTTP probe failed with statuscode: 404',
    });
    const loop = await runHttpProbe(req('/redirect-loop'));
    expect(loop.result).toBe('failure');
    expect(loop.output).toMatch(/stopped after 10 redirects$/);
  });

  it('does not follow a redirect to another host: success with a warning, as the kubelet', async () => {
    expect(await runHttpProbe(req('/redirect-other'))).toEqual({
      result: 'success',
      warning: true,
      output: 'Probe terminated redirects, Response body: <a>Found</a>',
    });
    expect((await runHttpProbe(req('/no-location'))).warning).toBe(true);
  });

  it('probes HTTPS without verifying the certificate', async () => {
    expect(await runHttpProbe(req('/ok', { scheme: 'https', port: tls.port }))).toEqual({
      result: 'success',
      output: 'fine',
    });
    expect((await runHttpProbe(req('/error', { scheme: 'https', port: tls.port }))).result).toBe('failure');
  });
});

describe('probeHeaders', () => {
  it('keeps one Host value', () => {
    expect(
      probeHeaders([
        { name: 'host', value: 'a' },
        { name: 'Host', value: 'b' },
      ]).host,
    ).toBe('a');
  });
});
