// The generated descriptor is what goes on the wire: check that it loads as the client loads it
// and spot-check field numbers against cri-api runtime.v1 (verified by hand against api.proto).
import { fromJSON } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import descriptor from '../../../src/cri/generated/cri-descriptor.json';

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);

function fieldId(message: string, field: string): number | undefined {
  return root.lookupType(`runtime.v1.${message}`).fields[field]?.id;
}

describe('CRI descriptor', () => {
  it('has every RPC bootlet calls', () => {
    const rs = root.lookupService('runtime.v1.RuntimeService');
    expect(Object.keys(rs.methods).sort()).toEqual(
      [
        'Attach',
        'ContainerStats',
        'ContainerStatus',
        'CreateContainer',
        'Exec',
        'ExecSync',
        'ListContainerStats',
        'ListPodSandboxStats',
        'PodSandboxStats',
        'PortForward',
        'GetContainerEvents',
        'ListContainers',
        'ListPodSandbox',
        'PodSandboxStatus',
        'RemoveContainer',
        'RemovePodSandbox',
        'ReopenContainerLog',
        'RunPodSandbox',
        'RuntimeConfig',
        'StartContainer',
        'Status',
        'StopContainer',
        'StopPodSandbox',
        'UpdateRuntimeConfig',
        'Version',
      ].sort(),
    );
    expect(rs.methods.GetContainerEvents!.responseStream).toBe(true);
    expect(Object.keys(root.lookupService('runtime.v1.ImageService').methods).sort()).toEqual([
      'ImageFsInfo',
      'ImageStatus',
      'ListImages',
      'PullImage',
    ]);
  });

  it.each([
    ['ImageSpec', 'userSpecifiedImage', 18],
    ['UpdateRuntimeConfigRequest', 'runtimeConfig', 1],
    ['RuntimeConfig', 'networkConfig', 1],
    ['NetworkConfig', 'podCidr', 1],
    ['ImageSpec', 'runtimeHandler', 19],
    ['LinuxSandboxSecurityContext', 'runAsGroup', 8],
    ['LinuxSandboxSecurityContext', 'seccomp', 9],
    ['LinuxContainerSecurityContext', 'runAsGroup', 12],
    ['LinuxContainerSecurityContext', 'noNewPrivs', 11],
    ['LinuxContainerSecurityContext', 'maskedPaths', 13],
    ['LinuxContainerSecurityContext', 'seccomp', 15],
    ['ContainerConfig', 'labels', 9],
    ['ContainerConfig', 'linux', 15],
    ['PodSandboxStatus', 'labels', 7],
    ['ContainerStatus', 'logPath', 15],
    ['Image', 'pinned', 8],
    ['PullImageRequest', 'sandboxConfig', 3],
    ['ContainerEventResponse', 'containersStatuses', 5],
    ['RuntimeConfigResponse', 'linux', 1],
    ['LinuxRuntimeConfiguration', 'cgroupDriver', 1],
    // Isolation, as in kubernetes/cri-api pkg/apis/runtime/v1/api.proto.
    ['StatusResponse', 'runtimeHandlers', 3],
    ['RuntimeHandler', 'name', 1],
    ['RuntimeHandler', 'features', 2],
    ['RuntimeHandlerFeatures', 'recursiveReadOnlyMounts', 1],
    ['RuntimeHandlerFeatures', 'userNamespaces', 2],
    ['NamespaceOption', 'usernsOptions', 5],
    ['UserNamespace', 'mode', 1],
    ['UserNamespace', 'uids', 2],
    ['UserNamespace', 'gids', 3],
    ['IDMapping', 'hostId', 1],
    ['IDMapping', 'containerId', 2],
    ['IDMapping', 'length', 3],
    ['LinuxSandboxSecurityContext', 'selinuxOptions', 2],
    ['LinuxContainerSecurityContext', 'selinuxOptions', 4],
    ['LinuxContainerSecurityContext', 'apparmorProfile', 9],
    ['LinuxContainerSecurityContext', 'apparmor', 16],
    ['SELinuxOption', 'user', 1],
    ['SELinuxOption', 'role', 2],
    ['SELinuxOption', 'type', 3],
    ['SELinuxOption', 'level', 4],
    ['Mount', 'recursiveReadOnly', 8],
    // Streaming and stats, as in kubernetes/cri-api pkg/apis/runtime/v1/api.proto.
    ['ExecRequest', 'cmd', 2],
    ['ExecRequest', 'tty', 3],
    ['ExecRequest', 'stdin', 4],
    ['ExecRequest', 'stdout', 5],
    ['ExecRequest', 'stderr', 6],
    ['AttachRequest', 'stdin', 2],
    ['AttachRequest', 'tty', 3],
    ['AttachRequest', 'stdout', 4],
    ['AttachRequest', 'stderr', 5],
    ['PortForwardRequest', 'podSandboxId', 1],
    ['PortForwardRequest', 'port', 2],
    ['ExecResponse', 'url', 1],
    ['ContainerStats', 'writableLayer', 4],
    ['CpuUsage', 'usageCoreNanoSeconds', 2],
    ['CpuUsage', 'usageNanoCores', 3],
    ['MemoryUsage', 'workingSetBytes', 2],
    ['MemoryUsage', 'majorPageFaults', 7],
    ['FilesystemUsage', 'inodesUsed', 4],
    ['ContainerStatsFilter', 'labelSelector', 3],
    ['LinuxPodSandboxStats', 'containers', 5],
    ['PodSandboxStats', 'linux', 2],
  ])('%s.%s = %i', (m, f, id) => expect(fieldId(m, f)).toBe(id));

  it('loads through proto-loader with camelCase names', () => {
    const def = fromJSON(descriptor as unknown as Parameters<typeof fromJSON>[0], {
      longs: Number,
      enums: Number,
      defaults: true,
    });
    expect(Object.keys(def)).toContain('runtime.v1.RuntimeService');
    const v = root.lookupType('runtime.v1.VersionResponse');
    expect(Object.keys(v.fields)).toEqual(['version', 'runtimeName', 'runtimeVersion', 'runtimeApiVersion']);
  });
});
