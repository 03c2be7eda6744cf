// containerd's own event stream (containerd.services.events.v1.Events/Subscribe), read over the
// same unix socket as the CRI. It is how bootlet learns at once that a task exited on a containerd
// that does not serve CRI GetContainerEvents (1.6). Only task events of one namespace are asked
// for; they leave this file as plain typed objects and gRPC errors as ContainerdEventsError.
import * as grpc from '@grpc/grpc-js';
import { followServerStream } from './grpc-stream.js';
import protobuf from 'protobufjs';
import descriptor from './generated/containerd-events-descriptor.json';
import { DECODE_OPTIONS } from './decode-options.js';
import { parseRuntimeEndpoint } from './endpoint.js';
import { setUpMessageTypes } from './protobuf-setup.js';
import type { Envelope__Output } from './generated/types/containerd/services/events/v1/Envelope.js';
import type { TaskDelete__Output } from './generated/types/containerd/services/events/v1/TaskDelete.js';
import type { TaskExit__Output } from './generated/types/containerd/services/events/v1/TaskExit.js';
import type { TaskOOM__Output } from './generated/types/containerd/services/events/v1/TaskOOM.js';
import type { TaskStart__Output } from './generated/types/containerd/services/events/v1/TaskStart.js';

/** containerd's Kubernetes namespace: where the CRI plugin keeps pods' containers and tasks. */
export const CRI_NAMESPACE = 'k8s.io';

const SUBSCRIBE_PATH = '/containerd.services.events.v1.Events/Subscribe';
/** The gRPC metadata key containerd reads the namespace of a request from. */
export const NAMESPACE_HEADER = 'containerd-namespace';

export const TASK_TOPICS = ['/tasks/start', '/tasks/exit', '/tasks/delete', '/tasks/oom'] as const;
export type TaskTopic = (typeof TASK_TOPICS)[number];

export interface ContainerdTaskEvent {
  topic: TaskTopic;
  namespace: string;
  /** The containerd container id, which is the CRI container or sandbox id. */
  containerId: string;
  /**
   * The process the event is about (exit, delete): the container id or '' for the task's init
   * process, an exec id for an exec (a probe's ExecSync). '' for start and oom.
   */
  processId: string;
  exitStatus?: number;
  /** When containerd published it, ms since the epoch (0 if absent). */
  publishedAtMs: number;
}

export class ContainerdEventsError extends Error {
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(`containerd event stream: ${grpc.status[code] ?? code}: ${details}`);
    this.name = 'ContainerdEventsError';
  }
  get unimplemented(): boolean {
    return this.code === grpc.status.UNIMPLEMENTED;
  }
}

/** The payload of each topic, as decoded with DECODE_OPTIONS (types generated from containerd-events.proto). */
interface TaskPayloads {
  '/tasks/start': TaskStart__Output;
  '/tasks/exit': TaskExit__Output;
  '/tasks/delete': TaskDelete__Output;
  '/tasks/oom': TaskOOM__Output;
}

/** A protobufjs type whose decoded object is T. */
interface Decoder<T> {
  decode(bytes: Uint8Array): T;
}

interface Codec {
  subscribeRequest: protobuf.Type;
  /** Every type a subscription encodes or decodes. */
  types: readonly protobuf.Type[];
  envelope: Decoder<Envelope__Output>;
  byTopic: { [K in TaskTopic]: Decoder<TaskPayloads[K]> };
}

let codec: Codec | undefined;

function loadCodec(): Codec {
  const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
  const types: protobuf.Type[] = [];
  const t = (name: string): protobuf.Type => {
    const type = root.lookupType(`containerd.services.events.v1.${name}`);
    types.push(type);
    return type;
  };
  // The objects have the shape of the generated X__Output types: same .proto, same options.
  const decoder = <T>(name: string): Decoder<T> => {
    const type = t(name);
    return { decode: (bytes) => type.toObject(type.decode(bytes), DECODE_OPTIONS) as T };
  };
  return {
    types,
    subscribeRequest: t('SubscribeRequest'),
    envelope: decoder('Envelope'),
    byTopic: {
      '/tasks/start': decoder('TaskStart'),
      '/tasks/exit': decoder('TaskExit'),
      '/tasks/delete': decoder('TaskDelete'),
      '/tasks/oom': decoder('TaskOOM'),
    },
  };
}

function isTaskTopic(topic: string | undefined): topic is TaskTopic {
  return (TASK_TOPICS as readonly string[]).includes(topic ?? '');
}

/** Filters for Subscribe: one per topic (a list is OR-ed), each restricted to the namespace. */
export function taskEventFilters(namespace: string): string[] {
  return TASK_TOPICS.map((topic) => `namespace==${namespace},topic=="${topic}"`);
}

/** Decodes one envelope; undefined for anything that is not a task event we asked for. */
export function decodeTaskEnvelope(bytes: Uint8Array): ContainerdTaskEvent | undefined {
  codec ??= loadCodec();
  const env = codec.envelope.decode(bytes);
  // The topic, not the Any's type URL, picks the payload type: the URL's spelling changed across
  // containerd versions, the topics did not.
  if (!isTaskTopic(env.topic) || !env.event) return undefined;
  const ts = env.timestamp;
  const event: ContainerdTaskEvent = {
    topic: env.topic,
    namespace: env.namespace,
    containerId: '',
    processId: '',
    publishedAtMs: ts ? ts.seconds * 1000 + Math.floor(ts.nanos / 1e6) : 0,
  };
  if (env.topic === '/tasks/exit' || env.topic === '/tasks/delete') {
    const payload = codec.byTopic[env.topic].decode(env.event.value);
    return { ...event, containerId: payload.containerId, processId: payload.id, exitStatus: payload.exitStatus };
  }
  return { ...event, containerId: codec.byTopic[env.topic].decode(env.event.value).containerId };
}

/**
 * Makes the event stream's codecs before its first event needs them (see protobuf-setup.ts): the
 * first task events arrive just as the first sandboxes are made, and setting up the envelope and
 * payload types then cost about 9 ms of the agent's CPU inside kubeadm's first pod starts.
 */
export function prepareTaskEventCodecs(): void {
  codec ??= loadCodec();
  const seen = new Set<protobuf.Type>();
  for (const t of codec.types) setUpMessageTypes(t, seen);
}

export function encodeSubscribeRequest(filters: string[]): Buffer {
  codec ??= loadCodec();
  return Buffer.from(codec.subscribeRequest.encode(codec.subscribeRequest.create({ filters })).finish());
}

export interface TaskEventSubscription {
  cancel(): void;
}

/** A client of containerd's event service on the runtime socket; one subscription per call. */
export class ContainerdEventsClient {
  private readonly client: grpc.Client;

  constructor(
    endpoint: string,
    private readonly namespace: string = CRI_NAMESPACE,
  ) {
    const parsed = parseRuntimeEndpoint(endpoint);
    if ('error' in parsed) throw new Error(`container runtime endpoint ${endpoint}: ${parsed.error}`);
    this.client = new grpc.Client(parsed.address, grpc.credentials.createInsecure());
  }

  /**
   * Subscribes to the task events of the namespace. `onEnd` is called once: without an error when
   * cancelled or closed by the server, with one when the stream failed (UNIMPLEMENTED: not a
   * containerd, or its event service is not served on this socket).
   */
  subscribeTaskEvents(
    onEvent: (e: ContainerdTaskEvent) => void,
    onEnd: (err?: ContainerdEventsError) => void,
  ): TaskEventSubscription {
    const metadata = new grpc.Metadata();
    metadata.set(NAMESPACE_HEADER, this.namespace);
    const call = this.client.makeServerStreamRequest<string[], Buffer>(
      SUBSCRIBE_PATH,
      encodeSubscribeRequest,
      (b) => b,
      taskEventFilters(this.namespace),
      metadata,
      {},
    );
    return followServerStream<Buffer, ContainerdEventsError>(
      call,
      (bytes) => {
        let e: ContainerdTaskEvent | undefined;
        try {
          e = decodeTaskEnvelope(bytes);
        } catch {
          // A payload we cannot read is dropped, not fatal: the periodic relist still covers it.
          e = undefined;
        }
        if (e && e.namespace === this.namespace) onEvent(e);
      },
      onEnd,
      (err) => new ContainerdEventsError(err.code ?? grpc.status.UNKNOWN, err.details || err.message),
    );
  }

  close(): void {
    this.client.close();
  }
}
