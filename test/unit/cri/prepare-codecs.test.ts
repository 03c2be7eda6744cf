// The CRI codecs made ahead of the first pod start encode and decode exactly as the ones a call
// makes on its own.
import { describe, expect, it } from 'vitest';
import { preparePodStartCodecs } from '../../../src/cri/cri-client.js';
import { criMessageCodec } from '../../../src/cri/grpc-transport.js';
import { decodeTaskEnvelope, prepareTaskEventCodecs } from '../../../src/cri/containerd-events.js';
import eventsDescriptor from '../../../src/cri/generated/containerd-events-descriptor.json';
import protobuf from 'protobufjs';

const request = {
  config: {
    metadata: { name: 'etcd-vm', uid: 'u1', namespace: 'kube-system', attempt: 0 },
    hostname: '',
    logDirectory: '/var/log/pods/kube-system_etcd-vm_u1',
    dnsConfig: { servers: ['10.0.0.2'], searches: [], options: [] },
    portMappings: [],
    labels: { 'io.kubernetes.pod.name': 'etcd-vm' },
    annotations: { 'kubernetes.io/config.source': 'file' },
    linux: {
      cgroupParent: '/kubepods/burstable/podu1',
      securityContext: { namespaceOptions: { network: 2, pid: 1, ipc: 1 } },
      resources: { cpuShares: 102, memoryLimitInBytes: 0 },
    },
  },
  runtimeHandler: '',
};

describe('preparePodStartCodecs', () => {
  it('leaves every codec of a pod start encoding and decoding as before', async () => {
    const codec = criMessageCodec('runtime.v1.RunPodSandboxRequest');
    const before = codec.deserialize(codec.serialize(request));
    await preparePodStartCodecs();
    // Twice: types already made are not made again.
    await preparePodStartCodecs();
    expect(codec.deserialize(codec.serialize(request))).toEqual(before);
    const status = criMessageCodec('runtime.v1.ContainerStatusResponse');
    const reply = {
      status: {
        id: 'c1',
        state: 1,
        createdAt: 5,
        startedAt: 6,
        labels: { a: 'b' },
        mounts: [{ containerPath: '/x', hostPath: '/y' }],
      },
      info: {},
    };
    expect(status.deserialize(status.serialize(reply))).toMatchObject({
      status: {
        id: 'c1',
        state: 1,
        createdAt: 5,
        labels: { a: 'b' },
        mounts: [{ containerPath: '/x', hostPath: '/y' }],
      },
    });
  });
});

describe('preparePodStartCodecs and containerd task events', () => {
  it('decodes a task exit envelope the same before and after the event codecs are prepared', async () => {
    const root = protobuf.Root.fromJSON(eventsDescriptor as protobuf.INamespace);
    const type = (n: string) => root.lookupType(`containerd.services.events.v1.${n}`);
    const exit = type('TaskExit');
    const payload = exit.encode(exit.fromObject({ containerId: 'c1', id: 'c1', pid: 42, exitStatus: 137 })).finish();
    const envelope = type('Envelope');
    const bytes = envelope
      .encode(
        envelope.fromObject({
          timestamp: { seconds: 1700000000, nanos: 5_000_000 },
          namespace: 'k8s.io',
          topic: '/tasks/exit',
          event: { typeUrl: 'containerd.events.TaskExit', value: payload },
        }),
      )
      .finish();
    await preparePodStartCodecs();
    const expected = {
      topic: '/tasks/exit',
      namespace: 'k8s.io',
      containerId: 'c1',
      processId: 'c1',
      exitStatus: 137,
      publishedAtMs: 1700000000005,
    };
    expect(decodeTaskEnvelope(bytes)).toEqual(expected);
    prepareTaskEventCodecs();
    expect(decodeTaskEnvelope(bytes)).toEqual(expected);
  });
});
