// The node's facts as the agent reports them and admission reads them: the machine's, the flags'
// (--node-labels, --register-with-taints, --max-pods, the kubelet port) and the live ones (the
// runtime's health and handlers, the node shutting down, the declared features those decide).
import type { VersionResponse } from '../cri/cri-types.js';
import type { RuntimeHealth } from '../kuberuntime/runtime-health.js';
import { collectNodeInfo, type NodeInfoSource } from '../node/node-info.js';
import { declaredFeatures, type NodeFeatureFacts } from '../config/node-features.js';
import { kubeletVersion } from '../version.js';
import type { BootletOptions } from './options.js';

export function agentNodeInfo(
  opts: BootletOptions,
  version: VersionResponse,
  health: Pick<RuntimeHealth, 'ready' | 'networkNotReady' | 'nodeRuntimeHandlers' | 'nodeFeatures'>,
  shuttingDown: () => boolean,
  imageFsDir: () => string | undefined,
): NodeInfoSource {
  const info = collectNodeInfo({
    nodeName: opts.nodeName,
    nodeIP: opts.nodeIP,
    runtimeVersion: `${version.runtimeName}://${version.runtimeVersion}`,
    kubeletVersion: kubeletVersion(),
    labels: opts.nodeLabels,
    taints: opts.registerWithTaints,
    runtimeReady: () => health.ready(),
    networkNotReady: () => health.networkNotReady(),
    runtimeHandlers: () => health.nodeRuntimeHandlers(),
    runtimeFeatures: () => health.nodeFeatures(),
    shuttingDown,
    rootDir: opts.rootDir,
    imageFsDir,
    maxPods: opts.maxPods,
    kubeletPort: opts.port,
  });
  return { ...info, declaredFeatures: () => declaredFeatures(nodeFeatureFacts(info)) };
}

/** What the runtime says of itself that decides a node feature, as the Node reports it. */
export function nodeFeatureFacts(
  info: Pick<NodeInfoSource, 'runtimeVersion' | 'runtimeHandlers' | 'runtimeFeatures'>,
): NodeFeatureFacts {
  return {
    runtimeVersion: info.runtimeVersion,
    runtimeHandlers: info.runtimeHandlers?.() ?? [],
    supplementalGroupsPolicy: info.runtimeFeatures?.()?.supplementalGroupsPolicy === true,
  };
}
