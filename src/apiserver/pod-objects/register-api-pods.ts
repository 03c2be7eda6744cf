// Which pods the objects are registered for: the desired set's API pods, as the kubelet's pod
// manager registers each pod it takes (HandlePodAdditions/Updates: RegisterPod) and unregisters
// each it lets go of (HandlePodRemoves: UnregisterPod). A pod taken again under the same UID with
// another spec is registered again (its references replaced); one replaced under its name by
// another UID is unregistered, its successor registered. Static pods refer to no API object. A pod
// refused before admission (its spec fails validation) is never registered: its names are not used.
import type { PodObjects } from '../../node/pod-objects.js';
import type { ApiPodView } from '../pod-sources.js';

export function registerApiPods(view: ApiPodView, objects: Pick<PodObjects, 'registerPod' | 'unregisterPod'>): void {
  view.onDesired?.((sp) => {
    if (!sp.refusal) objects.registerPod(sp.pod);
  });
  view.onRemoved((sp) => objects.unregisterPod(sp.uid));
  for (const sp of view.apiPods()) if (!sp.refusal) objects.registerPod(sp.pod);
}
