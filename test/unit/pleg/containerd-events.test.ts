// The containerd event client on the wire, against an in-process gRPC server that speaks the same
// descriptor: the namespace header and filters it subscribes with, task events decoded from their
// envelopes, and UNIMPLEMENTED from a socket that does not serve the event service.
import * as grpc from '@grpc/grpc-js';
import * as path from 'node:path';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import descriptor from '../../../src/cri/generated/containerd-events-descriptor.json';
import {
  ContainerdEventsClient,
  ContainerdEventsError,
  taskEventFilters,
  type ContainerdTaskEvent,
} from '../../../src/cri/containerd-events.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';

const tmp = useTmpDir('containerd-events');
const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
const type = (n: string) => root.lookupType(`containerd.services.events.v1.${n}`);

function envelope(namespace: string, topic: string, payloadType: string, payload: object): Buffer {
  const t = type(payloadType);
  const value = t.encode(t.create(payload)).finish();
  const env = type('Envelope');
  return Buffer.from(
    env
      .encode(
        env.create({
          timestamp: { seconds: 1_800_000_000, nanos: 5_000_000 },
          namespace,
          topic,
          event: { typeUrl: `containerd.events.${payloadType}`, value },
        }),
      )
      .finish(),
  );
}

const seen: { namespace?: string; filters?: string[] } = {};
let server: grpc.Server;
let address = '';
let noEventsAddress = '';
let noEventsServer: grpc.Server;

function bind(s: grpc.Server, sock: string): Promise<void> {
  return new Promise((resolve, reject) =>
    s.bindAsync(`unix://${sock}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
}

beforeAll(async () => {
  server = new grpc.Server();
  const subscribe: grpc.MethodDefinition<Buffer, Buffer> = {
    path: '/containerd.services.events.v1.Events/Subscribe',
    requestStream: false,
    responseStream: true,
    requestSerialize: (b) => b,
    requestDeserialize: (b) => b,
    responseSerialize: (b) => b,
    responseDeserialize: (b) => b,
  };
  server.addService({ Subscribe: subscribe } as grpc.ServiceDefinition, {
    Subscribe: (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
      seen.namespace = String(call.metadata.get('containerd-namespace')[0]);
      const req = type('SubscribeRequest').toObject(type('SubscribeRequest').decode(call.request)) as {
        filters: string[];
      };
      seen.filters = req.filters;
      call.write(
        envelope('moby', '/tasks/exit', 'TaskExit', { containerId: 'docker-thing', id: 'docker-thing', exitStatus: 1 }),
      );
      call.write(
        envelope('k8s.io', '/tasks/exit', 'TaskExit', { containerId: 'c1', id: 'c1', pid: 42, exitStatus: 137 }),
      );
      call.write(envelope('k8s.io', '/tasks/oom', 'TaskOOM', { containerId: 'c2' }));
      call.write(envelope('k8s.io', '/tasks/delete', 'TaskDelete', { containerId: 'c1', pid: 42, exitStatus: 137 }));
      call.write(envelope('k8s.io', '/containers/create', 'TaskOOM', { containerId: 'ignored' }));
      call.write(envelope('k8s.io', '/tasks/start', 'TaskStart', { containerId: 'c3', pid: 7 }));
    },
  });
  address = `unix://${path.join(tmp, 'cd.sock')}`;
  await bind(server, path.join(tmp, 'cd.sock'));
  noEventsServer = new grpc.Server();
  noEventsAddress = `unix://${path.join(tmp, 'cri-only.sock')}`;
  await bind(noEventsServer, path.join(tmp, 'cri-only.sock'));
});

afterAll(() => {
  server.forceShutdown();
  noEventsServer.forceShutdown();
});

describe('ContainerdEventsClient', () => {
  it('subscribes to the k8s.io task topics and decodes their events', async () => {
    const client = new ContainerdEventsClient(address);
    const got: ContainerdTaskEvent[] = [];
    let ended: { err?: ContainerdEventsError } | undefined;
    const sub = client.subscribeTaskEvents(
      (e) => got.push(e),
      (err) => {
        ended = { err };
      },
    );
    await waitFor(() => got.length === 4, { timeoutMs: 10_000, what: 'four task events' });
    expect(seen).toEqual({ namespace: 'k8s.io', filters: taskEventFilters('k8s.io') });
    expect(seen.filters).toContain('namespace==k8s.io,topic=="/tasks/exit"');
    expect(got).toEqual([
      {
        topic: '/tasks/exit',
        namespace: 'k8s.io',
        containerId: 'c1',
        processId: 'c1',
        exitStatus: 137,
        publishedAtMs: 1_800_000_000_005,
      },
      { topic: '/tasks/oom', namespace: 'k8s.io', containerId: 'c2', processId: '', publishedAtMs: 1_800_000_000_005 },
      {
        topic: '/tasks/delete',
        namespace: 'k8s.io',
        containerId: 'c1',
        processId: '',
        exitStatus: 137,
        publishedAtMs: 1_800_000_000_005,
      },
      {
        topic: '/tasks/start',
        namespace: 'k8s.io',
        containerId: 'c3',
        processId: '',
        publishedAtMs: 1_800_000_000_005,
      },
    ]);
    sub.cancel();
    await waitFor(() => ended, { timeoutMs: 10_000, what: 'the end of the stream' });
    expect(ended?.err).toBeUndefined();
    client.close();
  });

  it('ends with UNIMPLEMENTED where the event service is not served', async () => {
    const client = new ContainerdEventsClient(noEventsAddress);
    let ended: { err?: ContainerdEventsError } | undefined;
    client.subscribeTaskEvents(
      () => {},
      (err) => {
        ended = { err };
      },
    );
    await waitFor(() => ended, { timeoutMs: 10_000, what: 'the end of the stream' });
    expect(ended?.err).toBeInstanceOf(ContainerdEventsError);
    expect(ended?.err?.unimplemented).toBe(true);
    client.close();
  });
});
