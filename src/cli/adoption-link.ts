// Wires the adoption policy (config/pod-config/runtime-adoption.ts) to the parts that carry out its
// decisions: the runtime reader reads the runtime back, the file source re-identifies a kubelet's pod, admission
// admits (what runs first), the workers stop what no source gives and then start pods. Then what waits
// for adoption goes on.
import type { PodAdmission } from '../admission/pod-admission.js';
import type { PodConfig } from '../config/pod-config/pod-config.js';
import type { PodSources } from '../config/pod-config/start-sources.js';
import type { RuntimeReader } from '../pleg/runtime-reader.js';
import type { PodWorkers } from '../podworkers/pod-workers.js';

export interface AdoptionLinkDeps {
  readonly podConfig: PodConfig;
  readonly reader: RuntimeReader;
  readonly admission: PodAdmission;
  readonly sources: PodSources;
  readonly workers: PodWorkers;
  /** Adoption is done: what waits for it starts (the PLEG, systemd's READY with the admitted pods' UIDs). */
  readonly adopted: (admitted: string[]) => void;
}

/** Returns the stop of an adoption under way (retrying a runtime that cannot be read). */
export function linkAdoption(d: AdoptionLinkDeps): () => void {
  const { podConfig, reader, admission, workers } = d;
  const foundAtStart = (uid: string): boolean => podConfig.foundAtStart(uid);
  return podConfig.adoptRuntimePods({
    readAll: async () => {
      await reader.refreshAll();
      return reader.cache.pods();
    },
    adoptIdentity: (a) => d.sources.adoptIdentity(a.file, a.computedUid, a.runtimeUid),
    admit: () => admission.startAdmitting(foundAtStart),
    runs: (uid) => workers.has(uid),
    stop: (uid, pod, message) => workers.stopRuntimePod(uid, pod, message),
    adopted: () => {
      workers.start(foundAtStart);
      d.adopted(
        podConfig
          .all()
          .filter((p) => admission.isAdmitted(p.uid))
          .map((p) => p.uid),
      );
    },
  });
}
