// What the rest of bootlet uses of the API side.
export { startApiSide, type ApiSide, type ApiSideOptions } from './api-side.js';
export { DeferredPodObjects } from './pod-objects/deferred-pod-objects.js';
export { DeferredRuntimeClasses } from './pod-objects/runtime-classes.js';
export { defaultCertDir, validateClientConfig } from './client-credentials.js';
export { collectNodeInfo, type CollectNodeInfoOptions } from './node-info.js';
export { KubeconfigError, loadKubeconfig, type ClusterConnection } from './kubeconfig.js';
export { NodeFlagError, parseNodeLabels, parseTaints } from './node-flags.js';
export type {
  Clock,
  EventObject,
  EventRecorder,
  EventType,
  NodeInfoSource,
  NodePressure,
  PodStatusSource,
  ResourceList,
  StaticPodSource,
} from './types.js';
