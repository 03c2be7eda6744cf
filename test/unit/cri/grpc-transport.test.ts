// The client's wire behaviour against an in-process fake CRI server built from the same
// descriptor: deadlines per call kind, error mapping, and the event stream (which containerd 1.6
// does not implement, so the e2e test cannot exercise it).
import * as grpc from '@grpc/grpc-js';
import { fromJSON } from '@grpc/proto-loader';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import descriptor from '../../../src/cri/generated/cri-descriptor.json';
import { connectRuntime, type RuntimeConnection } from '../../../src/cri/cri-client.js';
import { ContainerEventType, CriError, type ContainerEventResponse } from '../../../src/cri/cri-types.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';

const tmp = useTmpDir('grpc-transport');
const sock = path.join(tmp, 'fake-cri.sock');
const deadlines: Record<string, number> = {};
let streamCancelled = false;
let server: grpc.Server;
let cri: RuntimeConnection;

type Handler = grpc.UntypedHandleCall;

function remaining(call: { getDeadline(): grpc.Deadline }): number {
  // An absolute time (Date or epoch ms), or Infinity for none.
  const d = call.getDeadline();
  const at = d instanceof Date ? d.getTime() : d;
  return Number.isFinite(at) ? at - Date.now() : Infinity;
}

function unary(name: string, reply: (req: Record<string, unknown>) => object | grpc.ServiceError): Handler {
  return ((call: grpc.ServerUnaryCall<Record<string, unknown>, object>, cb: grpc.sendUnaryData<object>) => {
    deadlines[name] = remaining(call);
    const r = reply(call.request);
    if (r instanceof Error) cb(r);
    else cb(null, r);
  }) as Handler;
}

beforeAll(async () => {
  const def = fromJSON(descriptor as unknown as Parameters<typeof fromJSON>[0], {
    longs: Number,
    enums: Number,
    defaults: true,
  });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    runtime: { v1: Record<string, grpc.ServiceClientConstructor> };
  };
  server = new grpc.Server();
  server.addService(pkg.runtime.v1.RuntimeService!.service, {
    Version: unary('Version', (req) => ({
      version: req.version,
      runtimeName: 'fake',
      runtimeVersion: '9.9',
      runtimeApiVersion: 'v1',
    })),
    ExecSync: unary('ExecSync', (req) => ({
      stdout: Buffer.from(`ran ${(req.cmd as string[]).join(' ')}`),
      stderr: Buffer.alloc(0),
      exitCode: 0,
    })),
    StopContainer: unary('StopContainer', () => ({})),
    // proto3 cannot make a field required: an answer may come without the status.
    PodSandboxStatus: unary('PodSandboxStatus', () => ({})),
    ContainerStatus: unary(
      'ContainerStatus',
      (req) =>
        Object.assign(new Error('gone'), {
          code: grpc.status.NOT_FOUND,
          details: `container ${String(req.containerId)} not found`,
        }) as grpc.ServiceError,
    ),
    GetContainerEvents: ((call: grpc.ServerWritableStream<object, object>) => {
      call.write({
        containerId: 'c1',
        containerEventType: ContainerEventType.CONTAINER_CREATED_EVENT,
        createdAt: 1_700_000_000_123_456_789,
      });
      call.write({ containerId: 'c1', containerEventType: ContainerEventType.CONTAINER_STARTED_EVENT, createdAt: 2 });
      // Then stay open until the client cancels, as a real runtime does.
      call.on('cancelled', () => {
        streamCancelled = true;
      });
    }) as Handler,
  });
  server.addService(pkg.runtime.v1.ImageService!.service, {
    PullImage: unary('PullImage', () => ({ imageRef: 'sha256:pulled' })),
    ImageStatus: unary('ImageStatus', () => ({})),
  });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${sock}`, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  cri = await connectRuntime(`unix://${sock}`, { requestTimeoutMs: 30_000 });
});

afterAll(() => {
  cri?.runtime.close();
  server?.forceShutdown();
});

describe('CRI transport', () => {
  it('sends the kubelet CRI version and reads camelCase fields', () => {
    expect(cri.version).toEqual({
      version: '0.1.0',
      runtimeName: 'fake',
      runtimeVersion: '9.9',
      runtimeApiVersion: 'v1',
    });
  });

  it('gives ordinary calls the request timeout, ExecSync its own timeout on top, PullImage none', async () => {
    await cri.runtime.stopContainer('c1', 10);
    const r = await cri.runtime.execSync('c1', ['echo', 'hi'], 60);
    expect(r.stdout.toString()).toBe('ran echo hi');
    await cri.images.pullImage({ image: 'x:1' });
    // Deadlines are absolute times, read a moment after being set: checked as ranges wide enough
    // for a very slow machine, yet telling 30 s + 10 s and 60 s + 30 s apart from the plain 30 s.
    expect(deadlines.StopContainer).toBeGreaterThan(30_000);
    expect(deadlines.StopContainer).toBeLessThanOrEqual(40_000);
    expect(deadlines.ExecSync).toBeGreaterThan(60_000 + 10_000);
    expect(deadlines.ExecSync).toBeLessThanOrEqual(90_000);
    expect(deadlines.PullImage).toBe(Infinity);
  });

  it('an image the runtime does not have is undefined, not an error', async () => {
    expect(await cri.images.imageStatus({ image: 'absent:1' })).toBeUndefined();
  });

  it('maps gRPC errors to CriError with method and code', async () => {
    const err = (await cri.runtime.containerStatus('c9').catch((e: unknown) => e)) as CriError;
    expect(err).toBeInstanceOf(CriError);
    expect([err.method, err.code, err.details, err.notFound]).toEqual([
      'ContainerStatus',
      grpc.status.NOT_FOUND,
      'container c9 not found',
      true,
    ]);
    expect(err.message).toBe('CRI ContainerStatus failed: container c9 not found');
  });

  it('a status answer without the status is a CriError, not a null status', async () => {
    const err = (await cri.runtime.podSandboxStatus('s1').catch((e: unknown) => e)) as CriError;
    expect(err).toBeInstanceOf(CriError);
    expect([err.method, err.code, err.details]).toEqual([
      'PodSandboxStatus',
      grpc.status.UNKNOWN,
      "the runtime's answer has no status",
    ]);
  });

  it('unimplemented methods surface as CriError UNIMPLEMENTED', async () => {
    const err = (await cri.runtime.listContainers().catch((e: unknown) => e)) as CriError;
    expect(err.code).toBe(grpc.status.UNIMPLEMENTED);
  });

  it('streams container events until cancelled, then ends once without error', async () => {
    const got: ContainerEventResponse[] = [];
    const ends: (CriError | undefined)[] = [];
    const sub = cri.runtime.getContainerEvents(
      (e) => got.push(e),
      (err) => ends.push(err),
    );
    await waitFor(() => got.length >= 2, { timeoutMs: 10_000, intervalMs: 10, what: 'two container events' });
    expect(got.map((e) => [e.containerId, e.containerEventType, e.createdAt])).toEqual([
      ['c1', ContainerEventType.CONTAINER_CREATED_EVENT, 1_700_000_000_123_456_800],
      ['c1', ContainerEventType.CONTAINER_STARTED_EVENT, 2],
    ]);
    sub.cancel();
    await waitFor(() => ends.length > 0 && streamCancelled, {
      timeoutMs: 10_000,
      intervalMs: 10,
      what: 'the stream to end and the server to see the cancel',
    });
    expect(ends).toEqual([undefined]);
  });
});
