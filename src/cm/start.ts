// Sets up the pod cgroups at start: picks the driver (the runtime's word over the setting, as the
// kubelet does with KubeletCgroupDriverFromCRI), warns early when containerd's config says the
// other driver, and builds the QoS hierarchy. When that cannot be done the pods still run, with
// no cgroup parent, and the reason is logged once.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pod } from 'kubernetes-types/core/v1';
import { nodeAllocatable, nodePidCapacity } from '../k8s/node-allocatable.js';
import { totalmem } from 'node:os';
import type { Logger } from '../log/logger.js';
import type { RuntimeService } from '../cri/cri-types.js';
import type { CgroupDriver } from './cgroup-name.js';
import { detectCgroupSubsystems, type CgroupSubsystems } from './cgroup-subsystems.js';
import { CgroupfsManager } from './cgroupfs-manager.js';
import { ContainerManager, type StartedPodCgroups } from './container-manager.js';
import {
  containerdDriverHint,
  driverFromRuntimeError,
  runtimeConfigDriver,
  RUNTIME_CONFIG_DRIVER_USED,
  RUNTIME_CONFIG_UNIMPLEMENTED,
  type AskOptions,
} from './runtime-cgroup-driver.js';
import type { SystemdDbus } from './systemd-dbus.js';
import { SystemdManager } from './systemd-manager.js';
import { errorMessage } from '../util/error-message.js';

/** Tries of the QoS hierarchy's set-up at start (1 s, 2 s, ... apart) before pods go without a parent. */
const START_ATTEMPTS = 4;

export interface CgroupSettings {
  /** cgroupDriver / --cgroup-driver; the runtime's RuntimeConfig answer wins over it. */
  cgroupDriver: CgroupDriver;
  /** cgroupsPerQOS / --cgroups-per-qos. */
  cgroupsPerQOS: boolean;
  /** cgroupRoot / --cgroup-root, cgroupfs form. */
  cgroupRoot: string;
  /** podPidsLimit; -1 (the default) sets none. */
  podPidsLimit?: number;
}

/** Without cgroups per QoS (or when they cannot be made) the kubelet sends no parent either. */
class NoPodCgroups implements StartedPodCgroups {
  private logged = false;
  constructor(
    readonly driver: CgroupDriver,
    private readonly logger: Logger,
  ) {}
  podCgroupParent(): string {
    return '';
  }
  async ensurePodCgroup(): Promise<void> {}
  async checkSandboxPlacement(): Promise<void> {}
  async removePodCgroup(): Promise<void> {}
  stop(): void {}
  /** An empty parent is refused by the systemd driver only; cgroupfs takes it. */
  reportRuntimeDriver(driver: CgroupDriver): void {
    if (driver !== 'systemd' || this.logged) return;
    this.logged = true;
    this.logger.error(
      'cgroup driver mismatch: the container runtime uses the systemd driver, which needs a pod cgroup parent; ' +
        'set cgroupsPerQOS: true and cgroupDriver: systemd in the KubeletConfiguration (or --cgroups-per-qos=true --cgroup-driver=systemd)',
    );
  }
  explainRuntimeError(message: string): string | undefined {
    const runtimeDriver = driverFromRuntimeError(message);
    if (runtimeDriver === undefined) return undefined;
    this.reportRuntimeDriver(runtimeDriver);
    return `cgroup driver mismatch: the runtime uses ${runtimeDriver}; set cgroupDriver: ${runtimeDriver} (--cgroup-driver=${runtimeDriver}) and cgroupsPerQOS: true`;
  }
}

export interface StartPodCgroupsDeps {
  /** The desired pods (the one desired set): their requests count for the QoS cgroups before their cgroups exist. */
  desiredPods?: () => Iterable<Pod>;
  subsystems?: CgroupSubsystems;
  connectSystemd?: () => Promise<SystemdDbus>;
  /** RuntimeConfig's tries (tests shorten the kubelet's 2 s between them). */
  askRuntime?: AskOptions;
  /** The runtime does not serve RuntimeConfig (kubelet_cri_losing_support). */
  onRuntimeConfigUnimplemented?: () => void;
}

export async function startPodCgroups(
  settings: CgroupSettings,
  runtime: Pick<RuntimeService, 'runtimeConfig' | 'statusInfo'>,
  logger: Logger,
  deps: StartPodCgroupsDeps = {},
): Promise<StartedPodCgroups> {
  let driver = settings.cgroupDriver;
  /** What the runtime's own config says, when it can be read: for the early warning. */
  let runtimeDriver: CgroupDriver | undefined;
  logger.v(4).info('Getting CRI runtime configuration information');
  const answer = await runtimeConfigDriver(runtime, deps.askRuntime);
  switch (answer.kind) {
    case 'driver':
      // The kubelet's line, with the setting it overrides when the two disagree.
      logger.info(RUNTIME_CONFIG_DRIVER_USED, {
        cgroupDriver: answer.driver,
        ...(answer.driver !== driver ? { cgroupDriverSetting: driver } : {}),
      });
      driver = runtimeDriver = answer.driver;
      break;
    case 'unimplemented':
      logger.info(RUNTIME_CONFIG_UNIMPLEMENTED, { cgroupDriver: driver });
      deps.onRuntimeConfigUnimplemented?.();
      break;
    case 'silent':
      break;
    // The kubelet refuses to start on these two; bootlet keeps the setting and says why.
    case 'unknown-driver':
      logger.error('runtime returned an unknown cgroup driver; using cgroupDriver from kubelet config', {
        value: answer.value,
        cgroupDriver: driver,
      });
      break;
    case 'failed':
      logger.error('RuntimeConfig from runtime service failed; using cgroupDriver from kubelet config', {
        err: answer.err,
        cgroupDriver: driver,
      });
      break;
  }
  if (answer.kind !== 'driver')
    runtimeDriver = containerdDriverHint(await runtime.statusInfo().catch(() => ({})))?.driver;

  if (!settings.cgroupsPerQOS) {
    const none = new NoPodCgroups(driver, logger);
    if (runtimeDriver) none.reportRuntimeDriver(runtimeDriver);
    logger.info('cgroupsPerQOS is off: pods get no cgroup parent', { cgroupDriver: driver });
    return none;
  }
  try {
    const subsystems = deps.subsystems ?? detectCgroupSubsystems();
    const manager =
      driver === 'systemd' ? new SystemdManager(subsystems, deps.connectSystemd) : new CgroupfsManager(subsystems);
    const cm = new ContainerManager({
      manager,
      // As the kubelet: with cgroups per QoS, an unset cgroupRoot is the root of the hierarchy.
      cgroupRoot: settings.cgroupRoot || '/',
      enforceCpuLimits: true,
      podPidsLimit: settings.podPidsLimit ?? -1,
      // kubepods' CPU shares: the node's allocatable CPU, as the kubelet sizes them.
      nodeCpuMilli: nodeAllocatable().cpuMillis,
      // kubepods' limits: the node's capacity, as the kubelet enforces node allocatable for pods
      // (its internal capacity is MemTotal, not less the eviction thresholds).
      nodeMemoryBytes: totalmem(),
      nodePids: nodePidCapacity(),
      logger,
      desiredPods: deps.desiredPods,
    });
    if (runtimeDriver) cm.reportRuntimeDriver(runtimeDriver);
    // A systemd still starting up may not answer at once: a few tries before giving up on cgroups.
    for (let attempt = 1; ; attempt++) {
      try {
        await cm.start();
        return cm;
      } catch (err) {
        if (attempt >= START_ATTEMPTS) {
          cm.stop();
          throw err;
        }
        logger.warn('Could not set up the pod cgroups yet, trying again', {
          cgroupDriver: driver,
          attempt,
          err: errorMessage(err),
        });
        await sleep(1000 * attempt);
      }
    }
  } catch (err) {
    logger.error('Could not set up the pod cgroups; pods start without a cgroup parent', {
      cgroupDriver: driver,
      cgroupRoot: settings.cgroupRoot,
      err: errorMessage(err),
    });
    return new NoPodCgroups(driver, logger);
  }
}
