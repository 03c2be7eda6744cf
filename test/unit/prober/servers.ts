// Real local servers on 127.0.0.1 for the handler tests: HTTP, HTTPS with a throwaway self-signed
// certificate made by openssl, and a gRPC server speaking grpc.health.v1.
import * as grpc from '@grpc/grpc-js';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { healthCheckMethod, type HealthCheckRequest, type HealthCheckResponse } from '../../../src/prober/grpc.js';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface Listening {
  port: number;
  close(): Promise<void>;
}

function listen(server: http.Server | https.Server): Promise<Listening> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        port,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}

export function startHttp(handler: Handler): Promise<Listening> {
  return listen(http.createServer(handler));
}

export function selfSignedCert(dir: string): { key: Buffer; cert: Buffer } {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=probe-test',
    ],
    { stdio: 'ignore' },
  );
  return { key: fs.readFileSync(key), cert: fs.readFileSync(cert) };
}

export function startHttps(creds: { key: Buffer; cert: Buffer }, handler: Handler): Promise<Listening> {
  return listen(https.createServer(creds, handler));
}

/** A health server whose answer per service name is looked up in `statuses` (absent: NOT_FOUND). */
export function startGrpcHealth(
  statuses: Map<string, string>,
  opts: { delayMs?: number; withoutHealth?: boolean } = {},
): Promise<Listening & { userAgents: string[] }> {
  const server = new grpc.Server();
  const userAgents: string[] = [];
  const m = healthCheckMethod();
  if (!opts.withoutHealth) {
    server.addService(
      {
        Check: {
          path: m.path,
          requestStream: false,
          responseStream: false,
          requestSerialize: m.requestSerialize,
          requestDeserialize: m.requestDeserialize,
          responseSerialize: m.responseSerialize,
          responseDeserialize: m.responseDeserialize,
        },
      },
      {
        Check: (
          call: grpc.ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>,
          cb: grpc.sendUnaryData<HealthCheckResponse>,
        ) => {
          userAgents.push(String(call.metadata.get('user-agent')[0] ?? ''));
          const answer = (): void => {
            const s = statuses.get(call.request.service);
            if (s === undefined) cb({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
            else cb(null, { status: s });
          };
          if (opts.delayMs) setTimeout(answer, opts.delayMs);
          else answer();
        },
      },
    );
  }
  return new Promise((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
      if (err) return reject(err);
      resolve({ port, userAgents, close: async () => server.forceShutdown() });
    });
  });
}
