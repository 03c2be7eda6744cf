// Once every manifest has been read, what runs without one can be told apart: the pod cache reads
// the runtime in full, admission learns the pods found running (admitted first, once the runtime is read),
// a kubelet's pod of the same manifest keeps its UID, the pods of a source that has not answered
// are held back, and the rest go to the workers. Then the desired set is told adoption is done.
import type { PodAdmission } from '../admission/pod-admission.js';
import type { PodConfig } from '../config/pod-config/pod-config.js';
import type { PodSources } from '../config/pod-config/start-sources.js';
import { configSourceOf } from '../kuberuntime/static-source.js';
import type { Logger } from '../log/logger.js';
import type { PodCache } from '../pleg/pod-cache.js';
import type { PodWorkers } from '../podworkers/pod-workers.js';
import { startAdoption } from '../podworkers/start-adoption.js';

export interface AdoptionLinkDeps {
  readonly podConfig: PodConfig;
  readonly cache: PodCache;
  readonly admission: PodAdmission;
  readonly sources: PodSources;
  readonly workers: PodWorkers;
  /** Adoption is done: what waits for it starts (the PLEG, systemd's READY with the admitted pods' UIDs). */
  readonly adopted: (admitted: string[]) => void;
  readonly logger: Logger;
}

/** Returns the stop of an adoption under way (retrying a runtime that cannot be read). */
export function linkAdoption(d: AdoptionLinkDeps): () => void {
  const { podConfig, cache, admission, workers } = d;
  let stopAdoption: (() => void) | undefined;
  podConfig.onSeen((seen) => {
    if (seen !== 'file') return;
    stopAdoption = startAdoption({
      readAll: async () => {
        await cache.refreshAll();
        const found = cache.pods();
        admission.runtimeFound(found.keys());
        return found;
      },
      desired: () => podConfig.all(),
      adoptIdentity: (a) => d.sources.adoptIdentity(a.file, a.computedUid, a.runtimeUid),
      holdBack: (found) => podConfig.holdBack(found, configSourceOf, (pods) => workers.adoptRuntimePods(pods)),
      adoptRuntimePods: (found) => {
        admission.startAdmitting();
        workers.adoptRuntimePods(found);
      },
      adopted: () => {
        podConfig.adoptionDone();
        d.adopted(
          podConfig
            .all()
            .filter((p) => admission.isAdmitted(p.uid))
            .map((p) => p.uid),
        );
      },
      logger: d.logger,
    });
  });
  return () => stopAdoption?.();
}
