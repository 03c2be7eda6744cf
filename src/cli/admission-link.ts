// Wires admission between the desired pod set and the pod workers: every change of the set goes
// through PodAdmission, which hands admitted pods' changes on and reports refused ones Failed in the
// status manager. The node's facts are the ones the agent registers its Node with.
import type { NodeInfoSource } from '../apiserver/index.js';
import { defaultNodeLabels } from '../apiserver/node-status.js';
import type { PodUpdate } from '../config/types.js';
import { PodAdmission } from '../admission/pod-admission.js';
import type { NodeFacts } from '../admission/node-facts.js';
import { notify, type PodWorkerObserver } from '../podworkers/observer.js';
import { parseQuantity } from '../k8s/quantity.js';
import type { Logger } from '../log/logger.js';
import { refusedPodStatus } from '../status/refused-status.js';
import type { StatusManager } from '../status/status-manager.js';

/** The Node's labels and allocatable as the agent reports them, in admission's units. */
export function nodeFactsOf(info: NodeInfoSource): NodeFacts {
  const a = info.allocatable();
  const num = (v: string | undefined, milli = false): number => (v === undefined ? 0 : milli ? parseQuantity(v).milliValue() : parseQuantity(v).value());
  return {
    name: info.nodeName,
    labels: { ...defaultNodeLabels(info), ...info.labels },
    allocatable: { milliCPU: num(a.cpu, true), memory: num(a.memory), ephemeralStorage: num(a['ephemeral-storage']), pods: num(a.pods) },
    taints: info.taints,
  };
}

/** How long admission uses the node's facts it read. */
const NODE_FACTS_MAX_AGE_MS = 1000;

export interface AdmissionLinkDeps {
  nodeInfo: NodeInfoSource;
  apply: (u: PodUpdate) => void;
  status: StatusManager;
  /** Told a Warning event per refusal (the API side records it once it is there). */
  observers: readonly PodWorkerObserver[];
  logger: Logger;
}

export function linkAdmission(deps: AdmissionLinkDeps): PodAdmission {
  const logger = deps.logger.with({ component: 'admission' });
  // Read at most once a second: allocatable stats the root file system synchronously and the facts
  // are parsed from quantities (30-45 µs), and a flood admits its pods over thousands of turns
  // (read once per turn before). The CPU count, memory, the root file system's size, the labels and
  // taints do not change within a second.
  let facts: NodeFacts | undefined;
  let readAt = 0;
  const nodeFacts = (): NodeFacts => {
    const now = performance.now();
    if (facts && now - readAt < NODE_FACTS_MAX_AGE_MS) return facts;
    readAt = now;
    return (facts = nodeFactsOf(deps.nodeInfo));
  };
  return new PodAdmission({
    node: nodeFacts,
    apply: deps.apply,
    isTerminal: (uid) => {
      const phase = deps.status.get(uid)?.status.phase;
      return phase === 'Succeeded' || phase === 'Failed';
    },
    refused: (pod, reason, message, how) => {
      deps.status.setRefused(pod, refusedPodStatus(pod.pod, reason, how === 'rejected' ? `Pod was rejected: ${message}` : message));
      const { uid, namespace, name } = pod.pod.metadata;
      notify(deps.observers, (o) => o.podEvent?.({ uid, namespace, name, type: 'Warning', reason, message }), (err) => logger.error('Pod event observer failed', { podUID: uid, err: String(err) }));
    },
    forgotten: (uid) => deps.status.forgetRefused(uid),
    logger,
  });
}
