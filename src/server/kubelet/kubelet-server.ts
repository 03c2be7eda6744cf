// The kubelet API on `port` (10250) at `address`: HTTPS with the serving certificate of
// serving-certificate.ts, client certificates asked for (verified against the client CA) when one
// is configured, every request through KubeletHandler, every connection through the ConnectionGate
// (deadlines, and budgets an unauthenticated client cannot exhaust). It binds once there is a
// certificate and keeps retrying a taken port, like the local endpoints. Idle, it costs nothing: no
// timer runs until a client connects (the gate's deadlines are per connection).
import { readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import type { SecureContextOptions, TLSSocket } from 'node:tls';
import type { Logger } from '../../log/logger.js';
import { rawReply } from '../streaming/raw-reply.js';
import { BindError, BindPending, SupervisedListener, type RetryOptions } from '../supervised-listener.js';
import { bindTcp } from '../tcp-listener.js';
import { opensslCiphers } from '../tls/cipher-suites.js';
import type { ServingCertificateSource } from '../tls/serving-certificate.js';
import type { ConnectionGate } from './connection-gate.js';
import type { KubeletHandler } from './kubelet-handler.js';
import { errorMessage } from '../../util/error-message.js';

export interface KubeletServerOptions {
  address: string;
  port: number;
  certificate: ServingCertificateSource;
  /** authentication.x509.clientCAFile: client certificates are requested and checked against it. */
  clientCAFile?: string;
  /** tlsMinVersion (VersionTLS12...); '' for TLS 1.2. */
  tlsMinVersion: string;
  /** tlsCipherSuites by Go's names, already checked (cipher-suites.ts); empty for OpenSSL's defaults. */
  tlsCipherSuites: readonly string[];
  handler: KubeletHandler;
  /** Deadlines and connection budgets (the handler tells it who authenticated). */
  gate: ConnectionGate;
  logger: Logger;
  retry?: RetryOptions;
}

/** As the kubelet's http.Server IdleTimeout. */
const IDLE_KEEPALIVE_MS = 90_000;
const RECHECK_CA_MS = 60_000;
/** Node's default periodic check of request deadlines would run every 30 s even with no client. */
const NO_PERIODIC_CHECK_MS = 2 ** 31 - 1;

const TLS_VERSIONS: Record<string, 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'> = {
  '': 'TLSv1.2',
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
};

export interface RunningKubeletServer {
  /** `https://0.0.0.0:10250` once bound. */
  readonly url: string | undefined;
  close(): Promise<void>;
}

export function startKubeletServer(o: KubeletServerOptions): RunningKubeletServer {
  let server: Server | undefined;
  let caSignature = '';
  let caCheckedAt = 0;
  const readCa = (): Buffer | undefined => {
    if (!o.clientCAFile) return undefined;
    const st = statSync(o.clientCAFile);
    caSignature = `${st.ino}:${st.size}:${st.mtimeMs}`;
    caCheckedAt = Date.now();
    return readFileSync(o.clientCAFile);
  };
  const context = (): SecureContextOptions => {
    const pair = o.certificate.current();
    if (!pair) {
      const making = o.certificate.making?.();
      throw making ? new BindPending(o.certificate.waiting(), making) : new BindError(o.certificate.waiting());
    }
    let ca: Buffer | undefined;
    try {
      ca = readCa();
    } catch (e) {
      throw new BindError(
        `cannot read the client CA file ${o.clientCAFile}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}; fix authentication.x509.clientCAFile (--client-ca-file)`,
      );
    }
    const minVersion = TLS_VERSIONS[o.tlsMinVersion] ?? 'TLSv1.2';
    return {
      cert: pair.cert,
      key: pair.key,
      ...(ca ? { ca } : {}),
      minVersion,
      // As Go: the list is for TLS 1.2 and below, so a TLS 1.3 minimum leaves nothing to configure.
      ...(o.tlsCipherSuites.length > 0 && minVersion !== 'TLSv1.3'
        ? { ciphers: opensslCiphers(o.tlsCipherSuites) }
        : {}),
    };
  };
  const refresh = (why: string): void => {
    if (!server) return;
    try {
      server.setSecureContext(context());
      o.logger.info('Kubelet API serves new TLS settings', { why });
    } catch (e) {
      o.logger.warn('Kubelet API keeps its TLS settings', { why, err: errorMessage(e) });
    }
  };

  const create = (): Server => {
    const s = createServer({
      ...context(),
      requestCert: o.clientCAFile !== undefined,
      rejectUnauthorized: false,
      connectionsCheckingInterval: NO_PERIODIC_CHECK_MS,
      keepAliveTimeout: IDLE_KEEPALIVE_MS,
      requestTimeout: 0,
      headersTimeout: 0,
    });
    // Before TLS wraps the socket: the gate's deadlines and budgets start at the accept, and a client CA or
    // certificate changed on disk is used from this connection on.
    s.prependListener('connection', (raw: Socket) => {
      o.gate.accepted(raw);
      o.certificate.recheck();
      if (o.clientCAFile && Date.now() - caCheckedAt >= RECHECK_CA_MS) {
        const before = caSignature;
        try {
          const st = statSync(o.clientCAFile);
          caCheckedAt = Date.now();
          if (`${st.ino}:${st.size}:${st.mtimeMs}` !== before) refresh('client CA file changed');
        } catch {
          caCheckedAt = Date.now();
        }
      }
    });
    s.on('secureConnection', (socket: TLSSocket) => o.gate.secured(socket));
    s.on('request', (req, res) => {
      o.gate.requestStarted(req);
      res.once('finish', () => o.gate.responded(res));
      void o.handler.request(req, res);
    });
    s.on('upgrade', (req, socket: Socket, head: Buffer) => {
      o.gate.upgraded(socket);
      void o.handler.upgrade(req, socket, head);
    });
    s.on('clientError', (_err, socket) => {
      if (socket.writable && !(socket as Socket).destroyed) rawReply(socket, 400, 'Bad Request');
      else socket.destroy();
    });
    s.on('tlsClientError', (_err, socket) => socket.destroy());
    s.on('error', (err: NodeJS.ErrnoException) => {
      if (s.listening) o.logger.v(2).info('Kubelet API error', { err: err.message });
    });
    return s;
  };

  const setting = { flag: '--port', field: 'port' };
  const listener = new SupervisedListener(
    {
      what: 'the kubelet API',
      fields: { address: `${o.address}:${o.port}` },
      servingFields: { clientCA: o.clientCAFile ?? 'none' },
      bind: async () => {
        server = create();
        const bound = await bindTcp(server as unknown as Parameters<typeof bindTcp>[0], o.address, o.port, setting);
        return { where: bound.where.replace(/^http:/, 'https:'), close: bound.close };
      },
    },
    o.logger,
    o.retry,
  );
  o.certificate.onChange(() => {
    if (server?.listening) refresh('serving certificate changed');
    else listener.retryNow();
  });
  void listener.start();
  return {
    get url() {
      return listener.where;
    },
    close: async () => {
      await listener.close();
      await o.certificate.stop();
    },
  };
}
