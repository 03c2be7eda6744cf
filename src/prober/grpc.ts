// grpc probe: grpc.health.v1.Health/Check with the optional service name over plaintext, as the
// kubelet; SERVING is success, anything else (including UNIMPLEMENTED) is a failure. The service
// definition is a few lines of JSON here, so nothing is read from disk at run time.
import * as grpc from '@grpc/grpc-js';
import { fromJSON, type MethodDefinition } from '@grpc/proto-loader';
import { joinHostPort } from './port.js';
import type { ProbeOutcome } from './types.js';
import { PROBE_USER_AGENT } from './user-agent.js';

/** grpc/health/v1/health.proto, Check only, in protobufjs JSON form. */
export const HEALTH_DESCRIPTOR = {
  nested: {
    grpc: {
      nested: {
        health: {
          nested: {
            v1: {
              nested: {
                HealthCheckRequest: { fields: { service: { type: 'string', id: 1 } } },
                HealthCheckResponse: {
                  fields: { status: { type: 'ServingStatus', id: 1 } },
                  nested: { ServingStatus: { values: { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } } },
                },
                Health: {
                  methods: {
                    Check: { requestType: 'HealthCheckRequest', responseType: 'HealthCheckResponse' },
                    Watch: { requestType: 'HealthCheckRequest', responseType: 'HealthCheckResponse', responseStream: true },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};

export interface HealthCheckRequest {
  service: string;
}
export interface HealthCheckResponse {
  status: string;
}

type CheckMethod = MethodDefinition<HealthCheckRequest, HealthCheckResponse>;

let checkMethod: CheckMethod | undefined;

/** The Check method's path and codecs; exported for tests that serve the health protocol. */
export function healthCheckMethod(): CheckMethod {
  if (!checkMethod) {
    const def = fromJSON(HEALTH_DESCRIPTOR as unknown as Parameters<typeof fromJSON>[0], { enums: String, defaults: true });
    const svc = def['grpc.health.v1.Health'] as Record<string, CheckMethod>;
    checkMethod = svc['Check']!;
  }
  return checkMethod;
}

function secondsText(ms: number): string {
  return `${ms / 1000}s`;
}

export function runGrpcProbe(host: string, port: number, service: string, timeoutMs: number): Promise<ProbeOutcome> {
  const addr = joinHostPort(host, port);
  const m = healthCheckMethod();
  const deadline = Date.now() + timeoutMs;
  const client = new grpc.Client(addr, grpc.credentials.createInsecure(), {
    'grpc.primary_user_agent': PROBE_USER_AGENT,
    // One probe, one connection: no reconnect storms from a cached channel to a dead port.
    'grpc.use_local_subchannel_pool': 1,
  });
  return new Promise<ProbeOutcome>((resolve) => {
    // As the kubelet (a blocking dial): first the connection, within the timeout, then the call.
    client.waitForReady(deadline, (connectErr) => {
      if (connectErr) {
        resolve({ result: 'failure', output: `timeout: failed to connect service ${JSON.stringify(addr)} within ${secondsText(timeoutMs)}: ${connectErr.message}` });
        return;
      }
      client.makeUnaryRequest(m.path, m.requestSerialize, m.responseDeserialize, { service }, new grpc.Metadata(), { deadline }, (err, res) => {
        if (err) {
          if (err.code === grpc.status.UNIMPLEMENTED) {
            resolve({ result: 'failure', output: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${err.details}` });
          } else if (err.code === grpc.status.DEADLINE_EXCEEDED) {
            resolve({ result: 'failure', output: `timeout: health rpc did not complete within ${secondsText(timeoutMs)}` });
          } else {
            resolve({ result: 'failure', output: `error: health rpc probe failed: ${err.message}` });
          }
          return;
        }
        const status = res?.status ?? 'UNKNOWN';
        resolve(status === 'SERVING' ? { result: 'success', output: 'service healthy' } : { result: 'failure', output: `service unhealthy (responded with ${JSON.stringify(status)})` });
      });
    });
  }).finally(() => client.close());
}
