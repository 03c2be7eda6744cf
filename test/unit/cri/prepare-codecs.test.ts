// The CRI codecs made ahead of the first pod start encode and decode exactly as the ones a call
// makes on its own.
import { describe, expect, it } from 'vitest';
import { preparePodStartCodecs } from '../../../src/cri/cri-client.js';
import { criMessageCodec } from '../../../src/cri/grpc-transport.js';

const request = {
  config: {
    metadata: { name: 'etcd-vm', uid: 'u1', namespace: 'kube-system', attempt: 0 },
    hostname: '',
    logDirectory: '/var/log/pods/kube-system_etcd-vm_u1',
    dnsConfig: { servers: ['10.0.0.2'], searches: [], options: [] },
    portMappings: [],
    labels: { 'io.kubernetes.pod.name': 'etcd-vm' },
    annotations: { 'kubernetes.io/config.source': 'file' },
    linux: { cgroupParent: '/kubepods/burstable/podu1', securityContext: { namespaceOptions: { network: 2, pid: 1, ipc: 1 } }, resources: { cpuShares: 102, memoryLimitInBytes: 0 } },
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
    const reply = { status: { id: 'c1', state: 1, createdAt: 5, startedAt: 6, labels: { a: 'b' }, mounts: [{ containerPath: '/x', hostPath: '/y' }] }, info: {} };
    expect(status.deserialize(status.serialize(reply))).toMatchObject({ status: { id: 'c1', state: 1, createdAt: 5, labels: { a: 'b' }, mounts: [{ containerPath: '/x', hostPath: '/y' }] } });
  });
});
