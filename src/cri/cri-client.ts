// Connecting to the container runtime: check the socket, handshake with Version, and hand out the
// typed RuntimeService / ImageService. Failures to connect are one-line RuntimeConnectErrors that
// name the endpoint, because that is the first thing an operator has to fix.
import { stat } from 'node:fs/promises';
import { status as grpcStatus } from '@grpc/grpc-js';
import type { ImageService, RuntimeService, VersionResponse } from './cri-types.js';
import { CriError } from './cri-types.js';
import { parseRuntimeEndpoint } from './endpoint.js';
import { CriTransport, prepareCriCodecs } from './grpc-transport.js';
import { prepareTaskEventCodecs } from './containerd-events.js';
import { createImageService } from './image-service.js';
import type { CriCallObserver } from './operation-type.js';
import { createRuntimeService } from './runtime-service.js';

/** The kubelet's default runtimeRequestTimeout. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 2 * 60 * 1000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5 * 1000;

export class RuntimeConnectError extends Error {
  constructor(
    readonly endpoint: string,
    readonly problem: string,
  ) {
    super(`container runtime endpoint ${endpoint}: ${problem}`);
    this.name = 'RuntimeConnectError';
  }
}

export interface RuntimeConnection {
  runtime: RuntimeService;
  images: ImageService;
  version: VersionResponse;
}

export interface ConnectOptions {
  /** Deadline of each ordinary CRI call (kubelet: runtimeRequestTimeout, 2m). */
  requestTimeoutMs?: number;
  /** Deadline of the first Version call. */
  connectTimeoutMs?: number;
  /** kubelet imageServiceEndpoint: a separate socket for the image service; default the runtime's. */
  imageServiceEndpoint?: string;
  /** Hears every unary call (for kubelet_runtime_operations_*). */
  onCall?: CriCallObserver;
}

/** The calls of a pod's start and of the reads that follow it, in the order a start makes them. */
const POD_START_CALLS = [
  ['RuntimeService', 'RunPodSandbox'],
  ['RuntimeService', 'PodSandboxStatus'],
  ['ImageService', 'ImageStatus'],
  ['RuntimeService', 'CreateContainer'],
  ['RuntimeService', 'StartContainer'],
  ['RuntimeService', 'ContainerStatus'],
  ['RuntimeService', 'ListPodSandbox'],
  ['RuntimeService', 'ListContainers'],
] as const;

/**
 * Makes the CRI codecs a pod start needs before one needs them (see prepareCriCodecs), and then
 * those of containerd's task events, in the agent's idle time, one step per turn of the event loop.
 * Never rejects: a codec that cannot be made fails its call (or drops its event) as before.
 */
export async function preparePodStartCodecs(): Promise<void> {
  await prepareCriCodecs(POD_START_CALLS).catch(() => undefined);
  await new Promise<void>((resolve) => setImmediate(resolve));
  try {
    prepareTaskEventCodecs();
  } catch {
    // As a failed call: the first event that needs it drops it, and the relist covers it.
  }
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))}s`;
}

async function checkSocket(endpoint: string, socketPath: string): Promise<void> {
  try {
    const st = await stat(socketPath);
    if (!st.isSocket()) throw new RuntimeConnectError(endpoint, `${socketPath} is not a socket`);
  } catch (err) {
    if (err instanceof RuntimeConnectError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new RuntimeConnectError(endpoint, 'no such socket');
    throw new RuntimeConnectError(endpoint, `cannot stat ${socketPath}: ${code ?? String(err)}`);
  }
}

function explain(err: CriError, connectTimeoutMs: number): string {
  switch (err.code) {
    case grpcStatus.DEADLINE_EXCEEDED:
      return `did not answer within ${seconds(connectTimeoutMs)}`;
    case grpcStatus.UNIMPLEMENTED:
      return 'does not serve CRI runtime.v1 (UNIMPLEMENTED): is the CRI plugin enabled?';
    case grpcStatus.UNAVAILABLE:
      return `cannot connect: ${err.details}`;
    default:
      return `Version failed (${grpcStatus[err.code] ?? err.code}): ${err.details}`;
  }
}

export async function connectRuntime(endpoint: string, opts: ConnectOptions = {}): Promise<RuntimeConnection> {
  const requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const connectTimeoutMs = opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const parsed = parseRuntimeEndpoint(endpoint);
  if ('error' in parsed) throw new RuntimeConnectError(endpoint, parsed.error);
  await checkSocket(endpoint, parsed.socketPath);

  const transport = new CriTransport(parsed.address, opts.onCall);
  let version: VersionResponse;
  try {
    version = await createRuntimeService(transport, connectTimeoutMs).version();
  } catch (err) {
    transport.close();
    throw new RuntimeConnectError(
      endpoint,
      explain(err instanceof CriError ? err : new CriError('Version', 2, String(err)), connectTimeoutMs),
    );
  }
  // An old v1alpha2-only runtime answers UNIMPLEMENTED above; anything that answers runtime.v1
  // Version is taken at its word.
  const runtime = createRuntimeService(transport, requestTimeoutMs);
  const imageEndpoint = opts.imageServiceEndpoint;
  if (imageEndpoint === undefined || imageEndpoint === '' || imageEndpoint === endpoint) {
    return { runtime, images: createImageService(transport, requestTimeoutMs), version };
  }
  const image = parseRuntimeEndpoint(imageEndpoint);
  if ('error' in image) {
    transport.close();
    throw new RuntimeConnectError(imageEndpoint, image.error);
  }
  try {
    await checkSocket(imageEndpoint, image.socketPath);
  } catch (err) {
    transport.close();
    throw err;
  }
  const imageTransport = new CriTransport(image.address, opts.onCall);
  return {
    // Closing the runtime closes both connections.
    runtime: { ...runtime, close: () => (runtime.close(), imageTransport.close()) },
    images: createImageService(imageTransport, requestTimeoutMs),
    version,
  };
}
