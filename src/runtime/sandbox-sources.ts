// Which runtime pods a given static source made, read from the `kubernetes.io/config.source`
// annotation the kubelet (and bootlet) put on every sandbox from the pod's annotations.
import type { RuntimeService } from './cri-types.js';
import { POD_UID_LABEL } from './labels.js';

const CONFIG_SOURCE_ANNOTATION = 'kubernetes.io/config.source';

/** The UIDs of the runtime pods whose sandboxes say they came from `source` (`file`, `http`). */
export async function podUidsFromSource(runtime: Pick<RuntimeService, 'listPodSandbox'>, source: string): Promise<Set<string>> {
  const out = new Set<string>();
  for (const s of await runtime.listPodSandbox()) {
    const uid = s.labels?.[POD_UID_LABEL];
    if (uid && s.annotations?.[CONFIG_SOURCE_ANNOTATION] === source) out.add(uid);
  }
  return out;
}
