// RuntimeService over a CriTransport: request/response shapes of runtime.v1 (typed by method from
// the generated definitions), deadlines as the kubelet's remote runtime client sets them.
import type { RuntimeService } from './cri-types.js';
import { CriError } from './cri-types.js';
import type { CriMethodName, CriRequest, CriResponse, CriTransport } from './grpc-transport.js';

/** The CRI API version the kubelet announces in VersionRequest. */
export const KUBELET_CRI_VERSION = '0.1.0';

type Method = CriMethodName<'RuntimeService'>;

/**
 * A message field the runtime must fill on success. proto3 cannot say "required", so the decoded
 * field may be null; the kubelet's client rejects such an answer too (verifySandboxStatus).
 */
export function required<T>(method: string, field: string, value: T | null): T {
  if (value === null) throw new CriError(method, 2, `the runtime's answer has no ${field}`);
  return value;
}

export function createRuntimeService(t: CriTransport, requestTimeoutMs: number): RuntimeService {
  const call = <M extends Method>(
    name: M,
    req: CriRequest<'RuntimeService', M>,
    timeoutMs: number | undefined = requestTimeoutMs,
  ): Promise<CriResponse<'RuntimeService', M>> => t.unary('RuntimeService', name, req, timeoutMs);

  return {
    version: () => call('Version', { version: KUBELET_CRI_VERSION }),
    status: async () => (await call('Status', {})).status ?? { conditions: [] },
    statusWithHandlers: async () => {
      const r = await call('Status', {});
      return {
        status: r.status ?? { conditions: [] },
        runtimeHandlers: r.runtimeHandlers,
        ...(r.features ? { features: r.features } : {}),
      };
    },
    statusInfo: async () => (await call('Status', { verbose: true })).info,
    runtimeConfig: () => call('RuntimeConfig', {}),
    updateRuntimeConfig: async (podCidr) => {
      await call('UpdateRuntimeConfig', { runtimeConfig: { networkConfig: { podCidr } } });
    },
    runPodSandbox: async (config, runtimeHandler = '') =>
      (await call('RunPodSandbox', { config, runtimeHandler })).podSandboxId,
    stopPodSandbox: async (podSandboxId) => {
      await call('StopPodSandbox', { podSandboxId });
    },
    removePodSandbox: async (podSandboxId) => {
      await call('RemovePodSandbox', { podSandboxId });
    },
    podSandboxStatus: async (podSandboxId) =>
      required('PodSandboxStatus', 'status', (await call('PodSandboxStatus', { podSandboxId })).status),
    listPodSandbox: async (filter) => (await call('ListPodSandbox', filter ? { filter } : {})).items,
    createContainer: async (podSandboxId, config, sandboxConfig) =>
      (await call('CreateContainer', { podSandboxId, config, sandboxConfig })).containerId,
    startContainer: async (containerId) => {
      await call('StartContainer', { containerId });
    },
    // The runtime itself waits `timeout` before SIGKILL, so the call may legitimately take that long.
    stopContainer: async (containerId, timeoutSeconds) => {
      await call('StopContainer', { containerId, timeout: timeoutSeconds }, requestTimeoutMs + timeoutSeconds * 1000);
    },
    removeContainer: async (containerId) => {
      await call('RemoveContainer', { containerId });
    },
    listContainers: async (filter) => (await call('ListContainers', filter ? { filter } : {})).containers,
    containerStatus: async (containerId) =>
      required('ContainerStatus', 'status', (await call('ContainerStatus', { containerId })).status),
    updateContainerResources: async (containerId, linux) => {
      await call('UpdateContainerResources', { containerId, linux });
    },
    updatePodSandboxResources: async (podSandboxId, resources) => {
      await call('UpdatePodSandboxResources', { podSandboxId, resources });
    },
    // As the kubelet: the command's own timeout plus the request timeout, so the runtime can report
    // the command's timeout itself; no deadline when the command has none.
    execSync: (containerId, cmd, timeoutSeconds) =>
      call(
        'ExecSync',
        { containerId, cmd, timeout: timeoutSeconds },
        timeoutSeconds > 0 ? timeoutSeconds * 1000 + requestTimeoutMs : undefined,
      ),
    reopenContainerLog: async (containerId) => {
      await call('ReopenContainerLog', { containerId });
    },
    exec: async (req) => (await call('Exec', req)).url,
    attach: async (req) => (await call('Attach', req)).url,
    portForward: async (podSandboxId, port) => (await call('PortForward', { podSandboxId, port })).url,
    listContainerStats: async (filter) => (await call('ListContainerStats', filter ? { filter } : {})).stats,
    listPodSandboxStats: async (filter) => (await call('ListPodSandboxStats', filter ? { filter } : {})).stats,
    getContainerEvents: (onEvent, onEnd) => t.serverStream('RuntimeService', 'GetContainerEvents', {}, onEvent, onEnd),
    close: () => t.close(),
  };
}
