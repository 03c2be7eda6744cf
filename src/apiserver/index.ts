// What the rest of bootlet uses of the API side.
export { startApiSide, type ApiSide, type ApiSideOptions } from './api-side.js';
export { DeferredPodObjects } from './pod-objects/deferred-pod-objects.js';
export { defaultCertDir, validateClientConfig } from './credentials/client-credentials.js';
export { collectNodeInfo, type CollectNodeInfoOptions } from './node/node-info.js';
export { KubeconfigError, loadKubeconfig, type ClusterConnection } from './client/kubeconfig.js';
export { NodeFlagError, parseNodeLabels, parseTaints } from './node/node-flags.js';
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
