// What the rest of bootlet uses of the API side.
export { startApiSide, type ApiSide, type ApiSideOptions } from './api-side.js';
export { DeferredPodObjects } from './pod-objects/deferred-pod-objects.js';
export { DeferredRuntimeClasses } from './pod-objects/runtime-classes.js';
export { defaultCertDir, validateClientConfig } from './credentials/client-credentials.js';
export { KubeconfigError, loadKubeconfig, type ClusterConnection } from './client/kubeconfig.js';
export type { Clock } from '../util/clock.js';
export type { EventObject, EventRecorder, EventType } from './events/event-recorder.js';
export type { PodStatusSource, StaticPodSource } from './pod-sources.js';
