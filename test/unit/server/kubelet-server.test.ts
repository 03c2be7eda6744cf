// The kubelet API's HTTPS listener (startKubeletServer), for real: its connection gate with short
// deadlines (absolute deadlines that a byte at a time does not push back, and a budget of
// unauthenticated connections that a flood from one address cannot take from anyone else), and the
// TLS settings tlsCipherSuites and tlsMinVersion.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as tcpConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeService } from '../../../src/cri/cri-types.js';
import { createLogger } from '../../../src/log/logger.js';
import { RequestAuthenticator } from '../../../src/server/auth/authenticator.js';
import { alwaysAllow } from '../../../src/server/auth/subject-access-review.js';
import { pingCheck } from '../../../src/server/healthz.js';
import { ConnectionGate, type ConnectionLimits } from '../../../src/server/kubelet/connection-gate.js';
import { KubeletHandler } from '../../../src/server/kubelet/kubelet-handler.js';
import { startKubeletServer, type RunningKubeletServer } from '../../../src/server/kubelet/kubelet-server.js';
import { cipherSuitesProblem, insecureCipherSuites } from '../../../src/server/tls/cipher-suites.js';
import type { StatsProvider } from '../../../src/server/stats/stats-provider.js';
import { createPki, type KeyPair, type Pki } from '../../support/fake-apiserver/pki.js';
import { waitFor } from '../../support/wait.js';

const LIMITS: ConnectionLimits = {
  handshakeMs: 400,
  firstHeadMs: 400,
  nextHeadMs: 400,
  bodyMs: 400,
  maxUnauthenticated: 4,
  maxConnections: 64,
  newPerSecond: 16,
  newBurst: 64,
  trustMs: 60_000,
};

let dir: string;
let pki: Pki;
let client: KeyPair;
let server: RunningKubeletServer | undefined;
let gate: ConnectionGate;
let lines: string[];
const sockets: Socket[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bootlet-gate-'));
  pki = createPki(dir);
  client = pki.issueClientCert('system:admin', ['system:masters']);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.close();
  server = undefined;
});

async function serve(
  limits: ConnectionLimits = LIMITS,
  tls: { tlsMinVersion: string; tlsCipherSuites: string[] } = { tlsMinVersion: '', tlsCipherSuites: [] },
): Promise<number> {
  lines = [];
  const logger = createLogger({ format: 'json', verbosity: 0, sink: { write: (l) => void lines.push(l) } });
  gate = new ConnectionGate(logger, limits);
  const handler = new KubeletHandler({
    source: { statuses: () => [], sinceLastRelistMs: () => 0 },
    runtime: {} as RuntimeService,
    podLogsDir: '/var/log/pods',
    stats: {} as StatsProvider,
    configz: () => ({}),
    metrics: () => '',
    checks: [pingCheck],
    enableDebuggingHandlers: true,
    nodeLogs: {
      logDir: '/nonexistent',
      enableSystemLogHandler: true,
      enableSystemLogQuery: false,
      journalctl: 'false',
    },
    authenticator: new RequestAuthenticator({ x509: true, tokens: undefined, anonymous: false }),
    authorizer: alwaysAllow,
    connections: gate,
    logger,
  });
  const certificate = {
    current: () => ({ cert: pki.server.certPem, key: pki.server.keyPem }),
    waiting: () => '',
    onChange: () => {},
    recheck: () => {},
    stop: async () => {},
  };
  server = startKubeletServer({
    address: '127.0.0.1',
    port: 0,
    certificate,
    clientCAFile: pki.caFile,
    ...tls,
    handler,
    gate,
    logger,
  });
  const url = await waitFor(() => server!.url, { timeoutMs: 10_000, what: 'the listener bound' });
  return Number(new URL(url).port);
}

function raw(port: number, localAddress = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = tcpConnect({ port, host: '127.0.0.1', localAddress }, () => resolve(s)).on('error', reject);
    s.on('error', () => {});
    sockets.push(s);
  });
}

function withCertificate(port: number): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect(
      { port, host: '127.0.0.1', ca: pki.caPem, cert: client.certPem, key: client.keyPem, servername: 'localhost' },
      () => resolve(s),
    ).on('error', reject);
    sockets.push(s);
  });
}

function closed(s: Socket): Promise<void> {
  return new Promise((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve())));
}

/** Writes `bytes` one at a time, 50 ms apart, until the socket closes or they run out. */
function trickle(s: Socket, bytes: Buffer): void {
  let i = 0;
  const next = (): void => {
    if (s.destroyed || i >= bytes.length) return;
    s.write(bytes.subarray(i, ++i));
    setTimeout(next, 50);
  };
  next();
}

/** What the server answered on `s` (one response, read until the blank line and Content-Length). */
function answer(s: Socket): Promise<string> {
  return new Promise((resolve) => {
    let got = '';
    const onData = (c: Buffer): void => {
      got += c.toString();
      const head = got.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(got);
      if (head >= 0 && length && got.length >= head + 4 + Number(length[1])) {
        s.off('data', onData);
        resolve(got);
      }
    };
    s.on('data', onData);
  });
}

const countLines = (msg: string) => lines.filter((l) => (JSON.parse(l) as { msg: string }).msg === msg);

describe('the kubelet API connection gate', () => {
  it('cuts a TLS handshake trickled a byte at a time at its absolute deadline, in one counted log line', async () => {
    const port = await serve();
    // A handshake record announcing 16 KiB: the server waits for all of it, each byte resetting an idle timer.
    const record = Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x40, 0x00]), Buffer.alloc(400)]);
    const a = await raw(port);
    const b = await raw(port);
    trickle(a, record);
    trickle(b, record);
    await Promise.all([closed(a), closed(b)]);
    await waitFor(() => countLines('Closed a kubelet API connection that did not finish its TLS handshake in time'), {
      timeoutMs: 5_000,
      what: 'the log line',
    });
    expect(countLines('Closed a kubelet API connection that did not finish its TLS handshake in time')).toHaveLength(1);
  });

  it('cuts a request head trickled a byte at a time', async () => {
    const port = await serve();
    const s = await withCertificate(port);
    trickle(s, Buffer.from(`GET /healthz HTTP/1.1\r\nHost: x\r\n${'X-Slow: y\r\n'.repeat(50)}\r\n`));
    await closed(s);
    expect(
      countLines('Closed a kubelet API connection that did not send a complete request head in time'),
    ).toHaveLength(1);
  });

  it('answers a request that announces a body, then cuts the connection when the body does not come', async () => {
    const port = await serve();
    const s = await withCertificate(port);
    const got = answer(s);
    s.write('GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n');
    expect(await got).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\r\n\r\nok$/);
    await closed(s);
    expect(countLines('Closed a kubelet API connection that did not send its request body in time')).toHaveLength(1);
  });

  it('a kept-alive connection serves one request after another; its next head has a deadline too', async () => {
    const port = await serve({ ...LIMITS, nextHeadMs: 60_000 });
    const s = await withCertificate(port);
    for (let i = 0; i < 3; i++) {
      const got = answer(s);
      s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await got).toMatch(/\r\n\r\nok$/);
    }
    expect(s.destroyed).toBe(false);
    const short = await serve();
    const t = await withCertificate(short);
    const got = answer(t);
    t.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await got;
    await closed(t);
  });

  it('a flood of unauthenticated connections from one address evicts its own oldest, never another source or a client-certificate connection', async () => {
    const port = await serve({ ...LIMITS, handshakeMs: 60_000, firstHeadMs: 60_000, nextHeadMs: 60_000 });
    const other = await raw(port, '127.0.0.2');
    const authenticated = await withCertificate(port);
    await waitFor(() => gate.counts.open === 2 && gate.counts.unauthenticated === 1, {
      timeoutMs: 5_000,
      what: 'two connections, one unauthenticated',
    });
    const flood: Socket[] = [];
    for (let i = 0; i < 12; i++) flood.push(await raw(port));
    // 12 from one address into a budget of 4 (one held by 127.0.0.2): the first 9 of them are closed.
    await Promise.all(flood.slice(0, 9).map(closed));
    await waitFor(() => gate.counts.unauthenticated === 4 && gate.counts.open === 5, {
      timeoutMs: 5_000,
      what: 'the budget full again',
    });
    expect(flood.slice(9).every((s) => !s.destroyed)).toBe(true);
    expect(other.destroyed).toBe(false);
    const got = answer(authenticated);
    authenticated.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await got).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*ok$/);
    const evictions = countLines(
      'Closed the oldest unauthenticated kubelet API connection of the busiest source: too many connections have not authenticated',
    );
    expect(evictions).toHaveLength(1);
  });

  it('an address that has not authenticated gets its burst of new connections, then each is closed at the accept; one that authenticated is not limited', async () => {
    const port = await serve({
      ...LIMITS,
      handshakeMs: 60_000,
      maxUnauthenticated: 32,
      newPerSecond: 0.001,
      newBurst: 3,
    });
    const burst = [await raw(port, '127.0.0.3'), await raw(port, '127.0.0.3'), await raw(port, '127.0.0.3')];
    const refused = await raw(port, '127.0.0.3');
    await closed(refused);
    await waitFor(() => gate.counts.open === 3, { timeoutMs: 5_000, what: 'the burst of three kept' });
    expect(burst.every((s) => !s.destroyed)).toBe(true);
    expect(
      countLines(
        'Refused a kubelet API connection: too many new connections from an address that has not authenticated',
      ),
    ).toHaveLength(1);
    // 127.0.0.4 authenticates with a client certificate first: its later connections are not counted against it.
    const authenticated = await new Promise<TLSSocket>((resolve, reject) => {
      const t = tlsConnect(
        {
          socket: tcpConnect({ port, host: '127.0.0.1', localAddress: '127.0.0.4' }),
          ca: pki.caPem,
          cert: client.certPem,
          key: client.keyPem,
          servername: 'localhost',
        },
        () => resolve(t),
      );
      t.on('error', reject);
      sockets.push(t);
    });
    await waitFor(() => gate.counts.open === 4 && gate.counts.unauthenticated === 3, {
      timeoutMs: 5_000,
      what: 'the certificate connection authenticated',
    });
    for (let i = 0; i < 6; i++) await raw(port, '127.0.0.4');
    await waitFor(() => gate.counts.open === 10, { timeoutMs: 5_000, what: 'six more from the trusted address' });
    expect(authenticated.destroyed).toBe(false);
  });

  it('a 401 leaves no connection behind', async () => {
    const port = await serve({ ...LIMITS, nextHeadMs: 60_000 });
    const s = await new Promise<TLSSocket>((resolve, reject) => {
      const t = tlsConnect({ port, host: '127.0.0.1', ca: pki.caPem, servername: 'localhost' }, () => resolve(t));
      t.on('error', reject);
      sockets.push(t);
    });
    const got = answer(s);
    s.write('GET /pods HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await got).toMatch(/^HTTP\/1\.1 401 Unauthorized[\s\S]*Connection: close/i);
    await closed(s);
    await waitFor(() => gate.counts.open === 0, { timeoutMs: 5_000, what: 'no connection left' });
  });
});

describe('TLS settings of the kubelet API', () => {
  /** The cipher negotiated by a client offering only `ciphers` (OpenSSL names) up to `maxVersion`, or the error. */
  function negotiate(port: number, maxVersion: 'TLSv1.2' | 'TLSv1.3', ciphers?: string): Promise<string> {
    return new Promise((resolve) => {
      const s = tlsConnect(
        {
          port,
          host: '127.0.0.1',
          ca: pki.caPem,
          servername: 'localhost',
          maxVersion,
          ...(ciphers ? { ciphers } : {}),
        },
        () => {
          resolve(`${s.getProtocol()} ${s.getCipher().standardName}`);
          s.destroy();
        },
      );
      s.on('error', (e: NodeJS.ErrnoException) => resolve(`refused: ${e.code ?? e.message}`));
      sockets.push(s);
    });
  }

  it('tlsCipherSuites (Go names) limits TLS 1.2 to those suites; TLS 1.3 keeps its own, as in Go', async () => {
    const port = await serve(LIMITS, {
      tlsMinVersion: '',
      tlsCipherSuites: ['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256'],
    });
    expect(await negotiate(port, 'TLSv1.2', 'ECDHE-ECDSA-AES128-GCM-SHA256')).toMatch(/^refused: /);
    expect(await negotiate(port, 'TLSv1.2', 'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384')).toBe(
      'TLSv1.2 TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
    );
    expect(await negotiate(port, 'TLSv1.3')).toMatch(/^TLSv1\.3 TLS_/);
  });

  it('tlsMinVersion VersionTLS13 refuses a TLS 1.2 client', async () => {
    const port = await serve(LIMITS, { tlsMinVersion: 'VersionTLS13', tlsCipherSuites: [] });
    expect(await negotiate(port, 'TLSv1.2')).toMatch(/^refused: /);
    expect(await negotiate(port, 'TLSv1.3')).toMatch(/^TLSv1\.3 /);
  });

  it("refuses a name Go does not know in the kubelet's words, and one this OpenSSL cannot serve", () => {
    expect(cipherSuitesProblem(['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305'])).toBe(
      undefined,
    );
    expect(cipherSuitesProblem(['ECDHE-RSA-AES128-GCM-SHA256'])).toBe(
      "Cipher suite ECDHE-RSA-AES128-GCM-SHA256 not supported or doesn't exist",
    );
    expect(cipherSuitesProblem(['TLS_RSA_WITH_RC4_128_SHA'])).toBe(
      "Cipher suite TLS_RSA_WITH_RC4_128_SHA (OpenSSL RC4-SHA) is not available in bootlet's TLS library",
    );
    expect(insecureCipherSuites(['TLS_RSA_WITH_AES_128_CBC_SHA', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'])).toEqual([
      'TLS_RSA_WITH_AES_128_CBC_SHA',
    ]);
  });
});
