// grpc probe: grpc.health.v1.Health/Check with the optional service name over plaintext, as the
// kubelet; SERVING is success, anything else (including UNIMPLEMENTED) is a failure. The service
// definition is a few lines of JSON here, so nothing is read from disk at run time.
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
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
                    Watch: {
                      requestType: 'HealthCheckRequest',
                      responseType: 'HealthCheckResponse',
                      responseStream: true,
                    },
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

/** The Check method's path and its two messages' codecs, both ways (a test's server uses the other half). */
export interface CheckMethod {
  path: string;
  requestSerialize(m: HealthCheckRequest): Buffer;
  requestDeserialize(b: Buffer): HealthCheckRequest;
  responseSerialize(m: HealthCheckResponse): Buffer;
  responseDeserialize(b: Buffer): HealthCheckResponse;
}

let checkMethod: CheckMethod | undefined;

/** Enum names as strings, absent fields as their defaults: `status` is always one of ServingStatus's names. */
const CONVERSION: protobuf.IConversionOptions = { enums: String, defaults: true };

function codec<T extends object>(type: protobuf.Type): { serialize(m: T): Buffer; deserialize(b: Buffer): T } {
  return {
    serialize: (m) => Buffer.from(type.encode(type.fromObject(m)).finish()),
    deserialize: (b) => type.toObject(type.decode(b), CONVERSION) as T,
  };
}

/**
 * The Check method's path and codecs, made by protobufjs from the JSON above on the first probe
 * (not by @grpc/proto-loader, whose module builds protobuf's whole descriptor.proto as it loads);
 * exported for tests that serve the health protocol.
 */
export function healthCheckMethod(): CheckMethod {
  if (!checkMethod) {
    const root = protobuf.Root.fromJSON(HEALTH_DESCRIPTOR);
    const req = codec<HealthCheckRequest>(root.lookupType('grpc.health.v1.HealthCheckRequest'));
    const res = codec<HealthCheckResponse>(root.lookupType('grpc.health.v1.HealthCheckResponse'));
    checkMethod = {
      path: '/grpc.health.v1.Health/Check',
      requestSerialize: req.serialize,
      requestDeserialize: req.deserialize,
      responseSerialize: res.serialize,
      responseDeserialize: res.deserialize,
    };
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
        resolve({
          result: 'failure',
          output: `timeout: failed to connect service ${JSON.stringify(addr)} within ${secondsText(timeoutMs)}: ${connectErr.message}`,
        });
        return;
      }
      client.makeUnaryRequest(
        m.path,
        m.requestSerialize,
        m.responseDeserialize,
        { service },
        new grpc.Metadata(),
        { deadline },
        (err, res) => {
          if (err) {
            if (err.code === grpc.status.UNIMPLEMENTED) {
              resolve({
                result: 'failure',
                output: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${err.details}`,
              });
            } else if (err.code === grpc.status.DEADLINE_EXCEEDED) {
              resolve({
                result: 'failure',
                output: `timeout: health rpc did not complete within ${secondsText(timeoutMs)}`,
              });
            } else {
              resolve({ result: 'failure', output: `error: health rpc probe failed: ${err.message}` });
            }
            return;
          }
          const status = res?.status ?? 'UNKNOWN';
          resolve(
            status === 'SERVING'
              ? { result: 'success', output: 'service healthy' }
              : { result: 'failure', output: `service unhealthy (responded with ${JSON.stringify(status)})` },
          );
        },
      );
    });
  }).finally(() => client.close());
}
