// Sets up the pod cgroups at start: picks the driver (the runtime's word over the setting, as the
// kubelet does with KubeletCgroupDriverFromCRI), warns early when containerd's config says the
// other driver, and builds the QoS hierarchy. When that cannot be done the pods still run, with
// no cgroup parent, and the reason is logged once.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pod } from 'kubernetes-types/core/v1';
import { nodeAllocatable } from '../k8s/node-allocatable.js';
import type { Logger } from '../log/logger.js';
import type { RuntimeService } from '../cri/cri-types.js';
import type { CgroupDriver } from './cgroup-name.js';
import { detectCgroupSubsystems, type CgroupSubsystems } from './cgroup-subsystems.js';
import { CgroupfsManager } from './cgroupfs-manager.js';
import { ContainerManager, type StartedPodCgroups } from './container-manager.js';
import { containerdDriverHint, driverFromRuntimeError, runtimeConfigDriver } from './runtime-cgroup-driver.js';
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
  async resizePodCgroup(): Promise<void> {}
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
  const fromRuntime = await runtimeConfigDriver(runtime).catch((err: unknown) => {
    logger.v(2).info('Could not ask the runtime for its cgroup driver', { err: errorMessage(err) });
    return undefined;
  });
  if (fromRuntime !== undefined) {
    if (fromRuntime !== driver)
      logger.info('Using the cgroup driver the container runtime reports, not the setting', {
        cgroupDriver: fromRuntime,
        setting: driver,
      });
    driver = runtimeDriver = fromRuntime;
  } else {
    runtimeDriver = containerdDriverHint(await runtime.statusInfo().catch(() => ({})))?.driver;
  }

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
