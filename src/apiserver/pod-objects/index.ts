// The API side's PodObjects: what the wiring and api-side.ts use of this folder.
export { ApiPodObjects, POD_OBJECT_SYNC_TIMEOUT_MS, type ApiPodObjectsOptions } from './api-pod-objects.js';
export { DeferredPodObjects, type ConnectedPodObjects } from './deferred-pod-objects.js';
export { podConfigMapNames, podSecretNames } from './references.js';
