// RuntimeService over a CriTransport: request/response shapes of runtime.v1, deadlines as the
// kubelet's remote runtime client sets them.
import type {
  ContainerConfig,
  ContainerEventResponse,
  ContainerFilter,
  ContainerStats,
  ContainerStatus,
  Container,
  ExecSyncResponse,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxFilter,
  PodSandboxStats,
  PodSandboxStatus,
  RuntimeConfigResponse,
  RuntimeService,
  RuntimeStatus,
  VersionResponse,
} from './cri-types.js';
import type { CriTransport } from './grpc-transport.js';

/** The CRI API version the kubelet announces in VersionRequest. */
export const KUBELET_CRI_VERSION = '0.1.0';

export function createRuntimeService(t: CriTransport, requestTimeoutMs: number): RuntimeService {
  const call = <Res>(name: string, req: object, timeoutMs: number | undefined = requestTimeoutMs): Promise<Res> =>
    t.unary<Res>('RuntimeService', name, req, timeoutMs);

  return {
    version: () => call<VersionResponse>('Version', { version: KUBELET_CRI_VERSION }),
    status: async () => (await call<{ status: RuntimeStatus | null }>('Status', {})).status ?? { conditions: [] },
    statusInfo: async () => (await call<{ info?: Record<string, string> }>('Status', { verbose: true })).info ?? {},
    runtimeConfig: () => call<RuntimeConfigResponse>('RuntimeConfig', {}),
    runPodSandbox: async (config: PodSandboxConfig, runtimeHandler = '') =>
      (await call<{ podSandboxId: string }>('RunPodSandbox', { config, runtimeHandler })).podSandboxId,
    stopPodSandbox: async (podSandboxId: string) => {
      await call('StopPodSandbox', { podSandboxId });
    },
    removePodSandbox: async (podSandboxId: string) => {
      await call('RemovePodSandbox', { podSandboxId });
    },
    podSandboxStatus: async (podSandboxId: string) =>
      (await call<{ status: PodSandboxStatus }>('PodSandboxStatus', { podSandboxId })).status,
    listPodSandbox: async (filter?: PodSandboxFilter) =>
      (await call<{ items: PodSandbox[] }>('ListPodSandbox', filter ? { filter } : {})).items,
    createContainer: async (podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig) =>
      (await call<{ containerId: string }>('CreateContainer', { podSandboxId, config, sandboxConfig })).containerId,
    startContainer: async (containerId: string) => {
      await call('StartContainer', { containerId });
    },
    // The runtime itself waits `timeout` before SIGKILL, so the call may legitimately take that long.
    stopContainer: async (containerId: string, timeoutSeconds: number) => {
      await call('StopContainer', { containerId, timeout: timeoutSeconds }, requestTimeoutMs + timeoutSeconds * 1000);
    },
    removeContainer: async (containerId: string) => {
      await call('RemoveContainer', { containerId });
    },
    listContainers: async (filter?: ContainerFilter) =>
      (await call<{ containers: Container[] }>('ListContainers', filter ? { filter } : {})).containers,
    containerStatus: async (containerId: string) =>
      (await call<{ status: ContainerStatus }>('ContainerStatus', { containerId })).status,
    // As the kubelet: the command's own timeout plus the request timeout, so the runtime can report
    // the command's timeout itself; no deadline when the command has none.
    execSync: (containerId: string, cmd: string[], timeoutSeconds: number) =>
      call<ExecSyncResponse>(
        'ExecSync',
        { containerId, cmd, timeout: timeoutSeconds },
        timeoutSeconds > 0 ? timeoutSeconds * 1000 + requestTimeoutMs : undefined,
      ),
    reopenContainerLog: async (containerId: string) => {
      await call('ReopenContainerLog', { containerId });
    },
    exec: async (req) => (await call<{ url: string }>('Exec', req)).url,
    attach: async (req) => (await call<{ url: string }>('Attach', req)).url,
    portForward: async (podSandboxId, port) => (await call<{ url: string }>('PortForward', { podSandboxId, port })).url,
    listContainerStats: async (filter) => (await call<{ stats: ContainerStats[] }>('ListContainerStats', filter ? { filter } : {})).stats,
    listPodSandboxStats: async (filter) => (await call<{ stats: PodSandboxStats[] }>('ListPodSandboxStats', filter ? { filter } : {})).stats,
    getContainerEvents: (onEvent, onEnd) =>
      t.serverStream<ContainerEventResponse>('RuntimeService', 'GetContainerEvents', {}, onEvent, onEnd),
    close: () => t.close(),
  };
}
