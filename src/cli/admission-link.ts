// Wires admission between the desired pod set and the pod workers: every change of the set goes
// through PodAdmission, which hands admitted pods' changes on and reports refused ones Failed in the
// status manager. The node's labels and taints are the Node's as the API server holds it (the API
// side's watch of it, as the kubelet's getNodeAnyWay reads its informer), else those the agent
// registers it with; the sysctl allowlist is the safe sysctls of this kernel and allowedUnsafeSysctls.
import { release } from 'node:os';
import type { Node } from 'kubernetes-types/core/v1';
import { initialNodeLabels, type NodeInfoSource } from '../node/node-info.js';
import type { PodUpdate } from '../config/types.js';
import type { TerminationRequest } from '../podworkers/termination-request.js';
import { PodAdmission } from '../admission/pod-admission.js';
import type { NodeFacts, PressureCondition } from '../admission/node-facts.js';
import { sysctlAllowlist, type SysctlAllowlist } from '../admission/sysctls.js';
import { isTerminalPhase } from '../k8s/pod-phase.js';
import { qosClass } from '../k8s/qos.js';
import { safeSysctls } from '../k8s/sysctls.js';
import { notify, type PodWorkerObserver } from '../podworkers/observer.js';
import { parseQuantity } from '../k8s/quantity.js';
import type { Logger } from '../log/logger.js';
import { APPARMOR_NOT_ENABLED, type AppArmorHost } from '../node/apparmor-host.js';
import { imageVolumeSupport } from '../node/image-volume-support.js';
import { refusedPodStatus } from '../status/refused-status.js';
import type { StatusManager } from '../status/status-manager.js';

/**
 * The node's facts in admission's units: allocatable and pressure as the agent reports them; labels and
 * taints from the Node the server holds (`registered`) once there is one, else as the agent registers it.
 */
export function nodeFactsOf(
  info: NodeInfoSource,
  sysctls: SysctlAllowlist = sysctlAllowlist([]),
  appArmor: AppArmorHost = NO_APPARMOR,
  registered?: Node,
): NodeFacts {
  const a = info.allocatable();
  const num = (v: string | undefined, milli = false): number =>
    v === undefined ? 0 : milli ? parseQuantity(v).milliValue() : parseQuantity(v).value();
  const p = info.pressure();
  const pressure: PressureCondition[] = [
    ...(p.memory ? ['MemoryPressure' as const] : []),
    ...(p.disk ? ['DiskPressure' as const] : []),
  ];
  return {
    name: info.nodeName,
    labels: registered ? (registered.metadata?.labels ?? {}) : initialNodeLabels(info),
    allocatable: {
      milliCPU: num(a.cpu, true),
      memory: num(a.memory),
      ephemeralStorage: num(a['ephemeral-storage']),
      pods: num(a.pods),
    },
    taints: registered ? (registered.spec?.taints ?? []) : info.taints,
    pressure,
    sysctls,
    shuttingDown: info.shuttingDown?.() ?? false,
    appArmor,
    imageVolumes: imageVolumeSupport(info.runtimeVersion),
  };
}

/** A host not read: no AppArmor assumed (a pod asking for it is refused, never run unconfined). */
const NO_APPARMOR: AppArmorHost = { error: APPARMOR_NOT_ENABLED };

/** How long admission uses the node's facts it read. */
const NODE_FACTS_MAX_AGE_MS = 1000;

export interface AdmissionLinkDeps {
  nodeInfo: NodeInfoSource;
  /** The node's Node as the API server holds it (the API side's watch); undefined standalone or until seen. */
  registeredNode?: () => Node | undefined;
  /** allowedUnsafeSysctls (checked by the settings table). */
  allowedUnsafeSysctls?: readonly string[];
  /** Whether the host can enforce AppArmor (node/apparmor-host.ts, read once at start). */
  appArmor: AppArmorHost;
  apply: (u: PodUpdate) => void;
  /** Stops a pod through its worker (PodWorkers.stop). */
  stop: (uid: string, request: TerminationRequest) => void;
  /** Resolves once nothing of the pod runs (PodWorkers.whenStopped). */
  stopped: (uid: string) => Promise<void>;
  status: StatusManager;
  /** Told a Warning event per refusal (the API side records it once it is there). */
  observers: readonly PodWorkerObserver[];
  logger: Logger;
}

export function linkAdmission(deps: AdmissionLinkDeps): PodAdmission {
  const logger = deps.logger.with({ component: 'admission' });
  const sysctls = sysctlAllowlist([...safeSysctls(release()), ...(deps.allowedUnsafeSysctls ?? [])]);
  // Read at most once a second: allocatable stats the root file system synchronously, the pressure
  // reads /proc/meminfo, and the facts are parsed from quantities (30-45 µs), and a flood admits its
  // pods over thousands of turns (read once per turn before). The CPU count, memory, the root file
  // system's size, the labels and taints do not change within a second. Whether the node is shutting
  // down is read at every pod: a pod added just after it began must be refused.
  let facts: NodeFacts | undefined;
  let readAt = 0;
  const nodeFacts = (): NodeFacts => {
    const now = performance.now();
    if (!facts || now - readAt >= NODE_FACTS_MAX_AGE_MS) {
      readAt = now;
      facts = nodeFactsOf(deps.nodeInfo, sysctls, deps.appArmor, deps.registeredNode?.());
    }
    return { ...facts, shuttingDown: deps.nodeInfo.shuttingDown?.() ?? false };
  };
  return new PodAdmission({
    node: nodeFacts,
    apply: deps.apply,
    stop: (pod, request) => deps.stop(pod.uid, request),
    isTerminal: (uid) => isTerminalPhase(deps.status.get(uid)?.status.phase),
    refused: (pod, reason, message, how) => {
      // A preempted pod's status is its stop's (its worker's termination request): kept while it stays refused.
      if (how === 'preempted') deps.status.hold(pod.uid, 'admission');
      else deps.status.setRefused(pod, refusedPodStatus(pod.pod, reason, `Pod was rejected: ${message}`));
      const { uid, namespace, name } = pod.pod.metadata;
      notify(
        deps.observers,
        (o) => o.podEvent?.({ uid, namespace, name, type: 'Warning', reason, message }),
        (err) => logger.error('Pod event observer failed', { podUID: uid, err: String(err) }),
      );
    },
    // Listed with the status the server has for it; the API side then has nothing to send.
    terminal: (pod) => deps.status.setRefused(pod, pod.pod.status ?? { qosClass: qosClass(pod.pod) }),
    forgotten: (uid) => {
      deps.status.forgetRefused(uid);
      deps.status.release(uid, 'admission');
    },
    stopped: deps.stopped,
    logger,
  });
}
