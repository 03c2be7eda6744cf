// The pod condition types the kubelet owns (kubelet's status.KubeletPodConditions plus the resize ones it
// sets since KEP-1287): bootlet computes these and patches only these; any other type on a pod (a readiness
// gate's, DisruptionTarget set by a controller) belongs to whoever set it.
import { POD_RESIZE_IN_PROGRESS, POD_RESIZE_PENDING } from './resize.js';

export const KUBELET_CONDITIONS: ReadonlySet<string> = new Set([
  'PodScheduled',
  'Ready',
  'Initialized',
  'ContainersReady',
  'PodReadyToStartContainers',
  POD_RESIZE_PENDING,
  POD_RESIZE_IN_PROGRESS,
]);
