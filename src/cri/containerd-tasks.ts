// A client of containerd's own task service (containerd.services.tasks.v1.Tasks) on the runtime
// socket, for the one repair the CRI cannot make (see containerd-tasks.proto). Every call names the
// CRI's namespace and has a deadline; gRPC errors leave this file as ContainerdTasksError.
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import descriptor from './generated/containerd-tasks-descriptor.json';
import type { GetResponse__Output } from './generated/types/containerd/services/tasks/v1/GetResponse.js';
import { TaskStatus } from './generated/types/containerd/services/tasks/v1/TaskStatus.js';
import { CRI_NAMESPACE, NAMESPACE_HEADER } from './containerd-events.js';
import { DECODE_OPTIONS } from './decode-options.js';
import { parseRuntimeEndpoint } from './endpoint.js';

export { TaskStatus };
export type TaskStatusCode = (typeof TaskStatus)[keyof typeof TaskStatus];

const SERVICE = '/containerd.services.tasks.v1.Tasks';
const SIGKILL = 9;

export class ContainerdTasksError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    readonly details: string,
  ) {
    super(`containerd Tasks/${method}: ${grpc.status[code] ?? code}: ${details}`);
    this.name = 'ContainerdTasksError';
  }
  get notFound(): boolean {
    return this.code === grpc.status.NOT_FOUND;
  }
}

interface Codec {
  type(name: string): protobuf.Type;
}

let codec: Codec | undefined;

function loadCodec(): Codec {
  const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
  return { type: (name) => root.lookupType(`containerd.services.tasks.v1.${name}`) };
}

/** The task service of one containerd; a channel is opened at the first call, closed by close(). */
export class ContainerdTasksClient {
  private readonly client: grpc.Client;

  constructor(
    endpoint: string,
    private readonly timeoutMs: number,
    private readonly namespace: string = CRI_NAMESPACE,
  ) {
    const parsed = parseRuntimeEndpoint(endpoint);
    if ('error' in parsed) throw new Error(`container runtime endpoint ${endpoint}: ${parsed.error}`);
    this.client = new grpc.Client(parsed.address, grpc.credentials.createInsecure());
  }

  /** The status of the container's task (its init process); undefined when it has none. */
  async taskStatus(containerId: string): Promise<TaskStatusCode | undefined> {
    try {
      const res = await this.call<GetResponse__Output>('Get', 'GetRequest', 'GetResponse', { containerId, execId: '' });
      return (res.process?.status ?? TaskStatus.UNKNOWN) as TaskStatusCode;
    } catch (err) {
      if (err instanceof ContainerdTasksError && err.notFound) return undefined;
      throw err;
    }
  }

  async kill(containerId: string): Promise<void> {
    await this.call('Kill', 'KillRequest', 'Empty', { containerId, execId: '', signal: SIGKILL, all: true });
  }

  /** Deletes a stopped task; NOT_FOUND (already gone) is success. */
  async delete(containerId: string): Promise<void> {
    try {
      await this.call('Delete', 'DeleteTaskRequest', 'DeleteResponse', { containerId });
    } catch (err) {
      if (err instanceof ContainerdTasksError && err.notFound) return;
      throw err;
    }
  }

  close(): void {
    this.client.close();
  }

  private call<R>(method: string, requestType: string, responseType: string, request: object): Promise<R> {
    codec ??= loadCodec();
    const req = codec.type(requestType);
    const res = codec.type(responseType);
    const metadata = new grpc.Metadata();
    metadata.set(NAMESPACE_HEADER, this.namespace);
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        `${SERVICE}/${method}`,
        (m: object) => Buffer.from(req.encode(req.create(m)).finish()),
        (b: Buffer) => res.toObject(res.decode(b), DECODE_OPTIONS) as R,
        request,
        metadata,
        { deadline: Date.now() + this.timeoutMs },
        (err, out) => {
          if (err)
            reject(new ContainerdTasksError(method, err.code ?? grpc.status.UNKNOWN, err.details || err.message));
          else resolve(out as R);
        },
      );
    });
  }
}
