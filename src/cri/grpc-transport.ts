// One gRPC channel to the runtime socket and the two primitives every CRI call is built from:
// a unary call with an optional deadline and a server stream. All gRPC errors leave this file as
// CriError, so callers never see grpc-js types.
import * as grpc from '@grpc/grpc-js';
import { followServerStream } from './grpc-stream.js';
import { fromJSON, type MethodDefinition, type PackageDefinition } from '@grpc/proto-loader';
import descriptor from './generated/cri-descriptor.json';
import { CriError } from './cri-types.js';
import type { CriCallObserver } from './operation-type.js';

/** As the kubelet: CRI responses (ListContainers on a busy node) can exceed grpc's 4 MiB default. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export type CriServiceName = 'RuntimeService' | 'ImageService';

type AnyMethod = MethodDefinition<object, object>;

function loadDefinition(): PackageDefinition {
  return fromJSON(descriptor as unknown as Parameters<typeof fromJSON>[0], {
    keepCase: false,
    longs: Number,
    enums: Number,
    defaults: true,
    arrays: true,
    objects: true,
    oneofs: true,
  });
}

let cachedDefinition: PackageDefinition | undefined;

function method(service: CriServiceName, name: string): AnyMethod {
  cachedDefinition ??= loadDefinition();
  const svc = cachedDefinition[`runtime.v1.${service}`] as Record<string, AnyMethod> | undefined;
  const m = svc?.[name];
  if (!m) throw new Error(`CRI descriptor has no ${service}.${name}: regenerate it (npm run gen)`);
  return m;
}

export function toCriError(methodName: string, err: unknown): CriError {
  if (err instanceof CriError) return err;
  const e = err as Partial<grpc.ServiceError>;
  const code = typeof e.code === 'number' ? e.code : grpc.status.UNKNOWN;
  const details = e.details || (err instanceof Error ? err.message : String(err));
  return new CriError(methodName, code, details);
}

export class CriTransport {
  private readonly client: grpc.Client;

  constructor(
    address: string,
    private readonly observe?: CriCallObserver,
  ) {
    this.client = new grpc.Client(address, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    });
  }

  /** `timeoutMs` undefined means no deadline (image pulls may take many minutes). */
  unary<Res>(service: CriServiceName, name: string, request: object, timeoutMs: number | undefined): Promise<Res> {
    const m = method(service, name);
    const options: grpc.CallOptions = timeoutMs === undefined ? {} : { deadline: Date.now() + timeoutMs };
    const started = performance.now();
    return new Promise<Res>((resolve, reject) => {
      this.client.makeUnaryRequest(
        m.path,
        m.requestSerialize,
        m.responseDeserialize,
        request,
        new grpc.Metadata(),
        options,
        (err, res) => {
          this.observe?.(name, performance.now() - started, err !== null && err !== undefined);
          if (err) reject(toCriError(name, err));
          else resolve(res as Res);
        },
      );
    });
  }

  serverStream<Res>(
    service: CriServiceName,
    name: string,
    request: object,
    onMessage: (m: Res) => void,
    onEnd: (err?: CriError) => void,
  ): { cancel(): void } {
    const m = method(service, name);
    const call = this.client.makeServerStreamRequest(m.path, m.requestSerialize, m.responseDeserialize, request, new grpc.Metadata(), {});
    return followServerStream<Res, CriError>(call as grpc.ClientReadableStream<Res>, onMessage, onEnd, (err) => toCriError(name, err));
  }

  close(): void {
    this.client.close();
  }
}
