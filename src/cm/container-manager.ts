// The node's pod cgroups as the kubelet lays them out with cgroupsPerQOS: <root>/kubepods for
// Guaranteed pods, kubepods/burstable and kubepods/besteffort beneath it, and one pod<uid>
// cgroup per pod with the pod's limits. The runtime side asks for a pod's cgroup parent, makes
// sure the pod cgroup exists before the sandbox, and removes it when the pod is cleaned up.
import type { Pod } from 'kubernetes-types/core/v1';
import type { Logger } from '../log/logger.js';
import { qosClass } from '../k8s/qos.js';
import { MIN_CPU_SHARES, milliCpuToShares } from './cpu-shares.js';
import { cgroupName, parseCgroupRoot, type CgroupDriver, type CgroupName } from './cgroup-name.js';
import type { CgroupManager } from './cgroup-manager.js';
import { podCpuRequestMilli, resourceConfigForPod } from './pod-resources.js';
import { driverFromRuntimeError, driverMismatchMessage } from './runtime-cgroup-driver.js';
import { errorMessage } from '../util/error-message.js';

/** The kubelet re-applies the QoS cgroups' settings this often. */
const QOS_UPDATE_PERIOD_MS = 60_000;
const REMOVE_RETRY_FIRST_MS = 1_000;
const REMOVE_RETRY_MAX_MS = 60_000;

/** What the runtime side needs; src/kuberuntime depends on this, not on the whole manager. */
export interface PodCgroups {
  /** The CgroupParent for the pod's sandbox, as the kubelet sends it for this driver ('' without QoS cgroups). */
  podCgroupParent(pod: Pod): string;
  /**
   * Creates the pod's cgroup with its limits unless it exists (`limitsWhateverExists`: writes them
   * even then, for a cgroup the runtime may be making at the same moment). Throws what went wrong.
   */
  ensurePodCgroup(pod: Pod, opts?: { limitsWhateverExists?: boolean }): Promise<void>;
  /**
   * The runtime makes a missing pod cgroup itself when a sandbox is put in it, so it may be made beside
   * RunPodSandbox: runc's cgroupfs driver makes missing directories; under systemd the pod's slice,
   * with its properties, must come first.
   */
  readonly runtimeMakesPodCgroup?: boolean;
  /** After a sandbox started: logs once if the runtime did not put it into the pod cgroup. */
  checkSandboxPlacement(pod: Pod): Promise<void>;
  /** A short message for a runtime error that is a cgroup-driver mismatch (logged once in full). */
  explainRuntimeError(message: string): string | undefined;
  /** Removes the pod's cgroup, now or, while it is busy, later; never throws. */
  removePodCgroup(uid: string): Promise<void>;
}

/** What the agent holds: PodCgroups plus the wiring around it. */
export interface StartedPodCgroups extends PodCgroups {
  readonly driver: CgroupDriver;
  /** The runtime is known (from its config) to use `driver`: a mismatch is logged, once. */
  reportRuntimeDriver(driver: CgroupDriver): void;
  stop(): void;
}

export interface ContainerManagerOptions {
  manager: CgroupManager;
  /** --cgroup-root, cgroupfs form. */
  cgroupRoot: string;
  /** cpuCFSQuota: enforce cpu limits with CFS quota. */
  enforceCpuLimits: boolean;
  podPidsLimit: number;
  /** The node's cpu capacity, for the kubepods cgroup's shares (node allocatable, no reservations). */
  nodeCpuMilli: number;
  /**
   * The node's memory and process-ID capacity, the kubepods cgroup's limits: the kubelet's default
   * enforceNodeAllocatable ["pods"] with no reservations (memory.max and pids.max on cgroup v2).
   */
  nodeMemoryBytes?: number;
  nodePids?: number;
  logger: Logger;
  /** The desired pods, read from the one desired set: their requests count before their cgroups exist. */
  desiredPods?: () => Iterable<Pod>;
}

interface PendingRemoval {
  timer: NodeJS.Timeout;
  delayMs: number;
}

export class ContainerManager implements StartedPodCgroups {
  private readonly kubepods: CgroupName;
  private readonly burstable: CgroupName;
  private readonly besteffort: CgroupName;
  /** Pods given a cgroup here: they count for the QoS cgroups' shares (beside the desired ones) until it is removed. */
  private readonly withCgroup = new Map<string, Pod>();
  private readonly removals = new Map<string, PendingRemoval>();
  private qosTimer: NodeJS.Timeout | undefined;
  private placementChecked = false;
  /** What this manager last wrote into the QoS cgroups, for a pod start that would write the same again. */
  private besteffortWritten = false;
  private burstableSharesWritten: number | undefined;
  private mismatchLogged = false;
  private stopped = false;

  constructor(private readonly o: ContainerManagerOptions) {
    this.kubepods = cgroupName(parseCgroupRoot(o.cgroupRoot), 'kubepods');
    this.burstable = cgroupName(this.kubepods, 'burstable');
    this.besteffort = cgroupName(this.kubepods, 'besteffort');
  }

  get driver(): CgroupDriver {
    return this.o.manager.driver;
  }

  /** Checks the root, creates kubepods and the QoS cgroups, and starts their periodic update. */
  async start(): Promise<void> {
    const m = this.o.manager;
    const root = parseCgroupRoot(this.o.cgroupRoot);
    if (root.length > 0 && !(await m.exists(root))) {
      throw new Error(`cgroupRoot ${this.o.cgroupRoot} does not exist (${m.name(root)} under the ${m.driver} driver)`);
    }
    await m.ensure(this.kubepods, {
      cpuShares: milliCpuToShares(this.o.nodeCpuMilli),
      ...(this.o.nodeMemoryBytes ? { memoryLimit: this.o.nodeMemoryBytes } : {}),
      ...(this.o.nodePids ? { pidsLimit: this.o.nodePids } : {}),
    });
    await m.ensure(this.besteffort, { cpuShares: MIN_CPU_SHARES });
    await m.ensure(this.burstable, {});
    await this.updateQosCgroups();
    this.qosTimer = setInterval(() => {
      this.updateQosCgroups().catch((err: unknown) =>
        this.o.logger.v(2).info('Failed to update QoS cgroups', { err: String(err) }),
      );
    }, QOS_UPDATE_PERIOD_MS);
    this.qosTimer.unref();
    this.o.logger.info('Pod cgroups under QoS classes', {
      driver: m.driver,
      cgroupVersion: m.cgroupVersion,
      kubepods: m.name(this.kubepods),
    });
  }

  stop(): void {
    this.stopped = true;
    if (this.qosTimer) clearInterval(this.qosTimer);
    for (const r of this.removals.values()) clearTimeout(r.timer);
    this.removals.clear();
    this.o.manager.close();
  }

  podCgroup(pod: Pod): CgroupName {
    if (!pod.metadata?.uid) throw new Error('pod has no UID');
    const parent = { Guaranteed: this.kubepods, Burstable: this.burstable, BestEffort: this.besteffort }[qosClass(pod)];
    return cgroupName(parent, `pod${pod.metadata.uid}`);
  }

  podCgroupParent(pod: Pod): string {
    return this.o.manager.name(this.podCgroup(pod));
  }

  get runtimeMakesPodCgroup(): boolean {
    return this.o.manager.driver === 'cgroupfs';
  }

  async ensurePodCgroup(pod: Pod, opts: { limitsWhateverExists?: boolean } = {}): Promise<void> {
    const name = this.podCgroup(pod);
    const uid = pod.metadata!.uid!;
    this.cancelRemoval(uid);
    this.withCgroup.set(uid, pod);
    if (!opts.limitsWhateverExists && (await this.o.manager.exists(name))) return;
    // As the kubelet: the QoS shares first, so the new pod's request is counted when it starts. A
    // share this manager wrote last and that has not changed is not written again on a pod's start
    // (a BestEffort pod changes none); the periodic update writes both whatever they hold.
    await this.updateQosCgroups({ changedOnly: true }).catch((err: unknown) =>
      this.o.logger.v(2).info('Failed to update QoS cgroups', { err: String(err) }),
    );
    await this.o.manager.ensure(
      name,
      resourceConfigForPod(pod, { enforceCpuLimits: this.o.enforceCpuLimits, podPidsLimit: this.o.podPidsLimit }),
    );
  }

  /** Burstable shares follow the sum of the Burstable pods' cpu requests; BestEffort stays at 2. */
  async updateQosCgroups(o: { changedOnly?: boolean } = {}): Promise<void> {
    let burstableMilli = 0;
    const active = new Map(this.withCgroup);
    for (const pod of this.o.desiredPods?.() ?? []) if (pod.metadata?.uid) active.set(pod.metadata.uid, pod);
    for (const pod of active.values()) if (qosClass(pod) === 'Burstable') burstableMilli += podCpuRequestMilli(pod);
    const burstableShares = milliCpuToShares(burstableMilli);
    const writes: Promise<void>[] = [];
    if (!o.changedOnly || !this.besteffortWritten)
      writes.push(
        this.o.manager
          .update(this.besteffort, { cpuShares: MIN_CPU_SHARES })
          .then(() => void (this.besteffortWritten = true)),
      );
    if (!o.changedOnly || this.burstableSharesWritten !== burstableShares) {
      // Forgotten until the write is done: one that fails is tried again by the next pod.
      this.burstableSharesWritten = undefined;
      writes.push(
        this.o.manager
          .update(this.burstable, { cpuShares: burstableShares })
          .then(() => void (this.burstableSharesWritten = burstableShares)),
      );
    }
    await Promise.all(writes);
  }

  async checkSandboxPlacement(pod: Pod): Promise<void> {
    if (this.placementChecked) return;
    this.placementChecked = true;
    const children = await this.o.manager.children(this.podCgroup(pod));
    if (children.length > 0) return;
    // runc given a systemd slice under its cgroupfs driver takes it as a relative path and starts the
    // sandbox elsewhere, without an error: the pod cgroup stays empty.
    const other = this.o.manager.driver === 'systemd' ? 'cgroupfs' : 'systemd';
    this.logMismatch(other);
  }

  explainRuntimeError(message: string): string | undefined {
    const runtimeDriver = driverFromRuntimeError(message);
    if (runtimeDriver === undefined || runtimeDriver === this.o.manager.driver) return undefined;
    this.logMismatch(runtimeDriver);
    return `cgroup driver mismatch: the runtime uses ${runtimeDriver}, bootlet ${this.o.manager.driver}; set cgroupDriver: ${runtimeDriver} (--cgroup-driver=${runtimeDriver})`;
  }

  reportRuntimeDriver(driver: CgroupDriver): void {
    if (driver !== this.o.manager.driver) this.logMismatch(driver);
  }

  private logMismatch(runtimeDriver: CgroupDriver): void {
    if (this.mismatchLogged) return;
    this.mismatchLogged = true;
    this.o.logger.error(driverMismatchMessage(runtimeDriver, this.o.manager.driver));
  }

  async removePodCgroup(uid: string): Promise<void> {
    this.withCgroup.delete(uid);
    this.cancelRemoval(uid);
    await this.tryRemove(uid, REMOVE_RETRY_FIRST_MS);
  }

  private cancelRemoval(uid: string): void {
    const r = this.removals.get(uid);
    if (r) clearTimeout(r.timer);
    this.removals.delete(uid);
  }

  /** The pod's cgroup may sit under any QoS class (its spec is gone by now): each is tried. */
  private async tryRemove(uid: string, delayMs: number): Promise<void> {
    let names: CgroupName[];
    try {
      names = [this.kubepods, this.burstable, this.besteffort].map((parent) => cgroupName(parent, `pod${uid}`));
    } catch {
      return; // not a UID bootlet could have made a cgroup for
    }
    let busy = false;
    try {
      for (const name of names) if ((await this.o.manager.destroy(name)) === 'busy') busy = true;
    } catch (err) {
      this.o.logger.v(2).info('Failed to remove pod cgroup, will retry', { podUID: uid, err: errorMessage(err) });
      busy = true;
    }
    if (!busy || this.stopped || this.withCgroup.has(uid)) return;
    this.o.logger.v(3).info('Pod cgroup still busy, will retry', { podUID: uid, retryIn: `${delayMs}ms` });
    const timer = setTimeout(() => {
      this.removals.delete(uid);
      void this.tryRemove(uid, Math.min(delayMs * 2, REMOVE_RETRY_MAX_MS));
    }, delayMs);
    timer.unref();
    this.removals.set(uid, { timer, delayMs });
  }
}
