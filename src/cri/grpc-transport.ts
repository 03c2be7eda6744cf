// One gRPC channel to the runtime socket and the two primitives every CRI call is built from:
// a unary call with an optional deadline and a server stream. Requests and responses are typed by
// the method's name from the generated service definitions. All gRPC errors leave this file as
// CriError, so callers never see grpc-js types.
import * as grpc from '@grpc/grpc-js';
import { followServerStream } from './grpc-stream.js';
import type { MethodDefinition } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import descriptor from './generated/cri-descriptor.json';
import type { ImageServiceDefinition } from './generated/types/runtime/v1/ImageService.js';
import type { RuntimeServiceDefinition } from './generated/types/runtime/v1/RuntimeService.js';
import { CriError } from './cri-types.js';
import { DECODE_OPTIONS } from './decode-options.js';
import { VerifyingBufferReader } from './verifying-buffer-reader.js';
import { setUpMessageTypes } from './protobuf-setup.js';
import type { CriCallObserver } from './operation-type.js';
import { errorMessage } from '../util/error-message.js';

/** As the kubelet: CRI responses (ListContainers on a busy node) can exceed grpc's 4 MiB default. */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

interface CriServices {
  RuntimeService: RuntimeServiceDefinition;
  ImageService: ImageServiceDefinition;
}
export type CriServiceName = keyof CriServices;

/** The generated definitions extend grpc-js's string-indexed ServiceDefinition: keep the named methods. */
type NamedKeys<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };
export type CriMethodName<S extends CriServiceName> = NamedKeys<CriServices[S]> & string;
type Method<S extends CriServiceName, M extends CriMethodName<S>> = CriServices[S][M];
/** What the method accepts (every field optional). */
export type CriRequest<S extends CriServiceName, M extends CriMethodName<S>> =
  Method<S, M> extends MethodDefinition<infer Req extends object, infer _Res, infer _ReqOut, infer _ResOut>
    ? Req
    : never;
/** What the transport hands out for the method: see CriOutput in cri-types.ts. */
export type CriResponse<S extends CriServiceName, M extends CriMethodName<S>> =
  Method<S, M> extends MethodDefinition<infer _Req, infer _Res, infer _ReqOut, infer ResOut> ? ResOut : never;

/** How one message goes to bytes and back, as the transport sends and decodes it. */
export interface CriMessageCodec {
  serialize(message: object): Buffer;
  deserialize(bytes: Buffer): object;
}

/** The path and codecs of one method: what a call needs of the descriptor. */
interface MethodCodec {
  path: string;
  request: CriMessageCodec;
  response: CriMessageCodec;
  /** The request and response types, for prepareCriCodecs. */
  types: readonly protobuf.Type[];
}

let root: protobuf.Root | undefined;
const methods = new Map<string, MethodCodec>();

function codecOf(type: protobuf.Type): CriMessageCodec {
  return {
    serialize: (message) => {
      const bytes = type.encode(type.fromObject(message)).finish();
      // protobufjs's writer gives a Buffer on Node; the view only guards the other case.
      return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    deserialize: (bytes) => type.toObject(type.decode(new VerifyingBufferReader(bytes)), DECODE_OPTIONS),
  };
}

function criRoot(): protobuf.Root {
  root ??= protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
  return root;
}

/** A CRI message's codec by its full name (`runtime.v1.PodSandboxConfig`), for tests that encode and decode as the transport does. */
export function criMessageCodec(fullName: string): CriMessageCodec {
  return codecOf(criRoot().lookupType(fullName));
}

/**
 * One method's codecs, made on its first call, with the conversions proto-loader's would use
 * (fromObject → encode; decode → toObject with DECODE_OPTIONS), so the objects keep the generated
 * types' shape. Not proto-loader's fromJSON: it also turns every message of the package back into
 * a descriptor, which took a third of the agent's start-up CPU before its first call.
 */
function method(service: CriServiceName, name: string): MethodCodec {
  const key = `${service}/${name}`;
  let m = methods.get(key);
  if (m) return m;
  const rpc = criRoot().lookup(`runtime.v1.${service}`);
  const found = rpc instanceof protobuf.Service ? rpc.methods[name] : undefined;
  if (!found) throw new Error(`CRI descriptor has no ${service}.${name}: regenerate it (npm run gen)`);
  found.resolve();
  const request = found.resolvedRequestType!;
  const response = found.resolvedResponseType!;
  m = {
    path: `/runtime.v1.${service}/${name}`,
    request: codecOf(request),
    response: codecOf(response),
    types: [request, response],
  };
  methods.set(key, m);
  return m;
}

/**
 * Makes the codecs of these methods, with every message type they reach, one method per turn of
 * the event loop, so that a call on the way is never held up behind more than one. For an agent
 * that waits: the first pods' calls then find them made (otherwise 2-7 ms of CPU per method, paid
 * inside the first pod starts, on a machine whose cores are busy starting containers).
 */
export async function prepareCriCodecs(calls: readonly (readonly [CriServiceName, string])[]): Promise<void> {
  const seen = new Set<protobuf.Type>();
  for (const [service, name] of calls) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (const t of method(service, name).types) setUpMessageTypes(t, seen);
  }
}

export function toCriError(methodName: string, err: unknown): CriError {
  if (err instanceof CriError) return err;
  const e = err as Partial<grpc.ServiceError>;
  const code = typeof e.code === 'number' ? e.code : grpc.status.UNKNOWN;
  const details = e.details || errorMessage(err);
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
  unary<S extends CriServiceName, M extends CriMethodName<S>>(
    service: S,
    name: M,
    request: CriRequest<S, M>,
    timeoutMs: number | undefined,
  ): Promise<CriResponse<S, M>> {
    const m = method(service, name);
    const options: grpc.CallOptions = timeoutMs === undefined ? {} : { deadline: Date.now() + timeoutMs };
    const started = performance.now();
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        m.path,
        m.request.serialize,
        m.response.deserialize,
        request,
        new grpc.Metadata(),
        options,
        (err, res) => {
          this.observe?.(name, performance.now() - started, err !== null && err !== undefined);
          if (err) reject(toCriError(name, err));
          // The deserializer built the object from the same descriptor the type was generated from.
          else resolve(res as CriResponse<S, M>);
        },
      );
    });
  }

  serverStream<S extends CriServiceName, M extends CriMethodName<S>>(
    service: S,
    name: M,
    request: CriRequest<S, M>,
    onMessage: (m: CriResponse<S, M>) => void,
    onEnd: (err?: CriError) => void,
  ): { cancel(): void } {
    const m = method(service, name);
    const call = this.client.makeServerStreamRequest(
      m.path,
      m.request.serialize,
      m.response.deserialize,
      request,
      new grpc.Metadata(),
      {},
    );
    return followServerStream(call as grpc.ClientReadableStream<CriResponse<S, M>>, onMessage, onEnd, (err) =>
      toCriError(name, err),
    );
  }

  close(): void {
    this.client.close();
  }
}
