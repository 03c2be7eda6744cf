// Which cgroup driver the container runtime uses, as far as it can be known: CRI RuntimeConfig
// (CRI v1.28+, e.g. containerd 2.x), else containerd's own config in a verbose Status (a hint,
// for an early warning only), else nothing until a sandbox fails with the runtime's own words.
import { setTimeout as delay } from 'node:timers/promises';
import { CgroupDriver as CriCgroupDriver, CriError, type RuntimeService } from '../cri/cri-types.js';
import type { CgroupDriver } from './cgroup-name.js';
import { errorMessage } from '../util/error-message.js';

/** What the runtime's RuntimeConfig says of its cgroup driver. */
export type RuntimeConfigDriver =
  | { kind: 'driver'; driver: CgroupDriver }
  /** UNIMPLEMENTED: containerd 1.x, CRI-O before 1.28. */
  | { kind: 'unimplemented' }
  /** An answer without `linux`: nothing said. */
  | { kind: 'silent' }
  | { kind: 'unknown-driver'; value: number }
  /** Every try failed otherwise (the runtime still starting, or down). */
  | { kind: 'failed'; err: string };

export interface AskOptions {
  /** The kubelet's: 3 tries... */
  attempts?: number;
  /** ...2 s apart, for a runtime still starting up. */
  retryDelayMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The kubelet's getCgroupDriverFromCRI (KubeletCgroupDriverFromCRI, GA in 1.34): RuntimeConfig, tried
 * again 2 s later on any error but UNIMPLEMENTED, three times in all.
 */
export async function runtimeConfigDriver(
  runtime: Pick<RuntimeService, 'runtimeConfig'>,
  o: AskOptions = {},
): Promise<RuntimeConfigDriver> {
  const attempts = o.attempts ?? 3;
  const sleep = o.sleep ?? ((ms: number) => delay(ms));
  let err = '';
  for (let i = 0; i < attempts; i++) {
    try {
      const res = await runtime.runtimeConfig();
      if (!res.linux) return { kind: 'silent' };
      const value = res.linux.cgroupDriver;
      if (value === CriCgroupDriver.SYSTEMD) return { kind: 'driver', driver: 'systemd' };
      if (value === CriCgroupDriver.CGROUPFS) return { kind: 'driver', driver: 'cgroupfs' };
      return { kind: 'unknown-driver', value: Number(value) };
    } catch (e) {
      if (e instanceof CriError && e.unimplemented) return { kind: 'unimplemented' };
      err = errorMessage(e);
      await sleep(o.retryDelayMs ?? 2000);
    }
  }
  return { kind: 'failed', err };
}

/** The kubelet's lines (cmd/kubelet/app/server.go) for what RuntimeConfig answered. */
export const RUNTIME_CONFIG_DRIVER_USED = 'Using cgroup driver setting received from the CRI runtime';
export const RUNTIME_CONFIG_UNIMPLEMENTED =
  'CRI implementation should be updated to support RuntimeConfig. Falling back to using cgroupDriver from kubelet config.';

interface ContainerdRuntime {
  runtimeType?: string;
  options?: Record<string, unknown> | null;
}

/**
 * containerd (1.x) puts its CRI config in Status(verbose).info.config: the default runtime's runc
 * options say SystemdCgroup. undefined when the info is not containerd's or has no runc runtime.
 */
export function containerdDriverHint(
  info: Record<string, string>,
): { driver: CgroupDriver; runtimeHandler: string } | undefined {
  let cfg: { containerd?: { defaultRuntimeName?: string; runtimes?: Record<string, ContainerdRuntime> } };
  try {
    cfg = JSON.parse(info.config ?? '') as typeof cfg;
  } catch {
    return undefined;
  }
  const name = cfg.containerd?.defaultRuntimeName;
  const rt = name ? cfg.containerd?.runtimes?.[name] : undefined;
  if (!name || !rt || !/runc/.test(rt.runtimeType ?? '')) return undefined;
  return { driver: rt.options?.SystemdCgroup === true ? 'systemd' : 'cgroupfs', runtimeHandler: name };
}

/**
 * The driver a runtime error shows the runtime to use, when the error is a cgroup-driver mismatch:
 * runc's systemd driver given a cgroupfs path, or CRI-O refusing a parent of the other kind.
 */
export function driverFromRuntimeError(message: string): CgroupDriver | undefined {
  if (/expected cgroupsPath to be of format "?slice:prefix:name"? for systemd cgroups/.test(message)) return 'systemd';
  if (/configured with systemd cgroup manager, but did not receive slice as parent/.test(message)) return 'systemd';
  if (/configured with cgroupfs cgroup manager, but received systemd slice as parent/.test(message)) return 'cgroupfs';
  return undefined;
}

/** The one line for the operator: what differs and which setting to change. */
export function driverMismatchMessage(runtimeDriver: CgroupDriver, ours: CgroupDriver): string {
  const runcSetting = runtimeDriver === 'systemd' ? 'SystemdCgroup = false' : 'SystemdCgroup = true';
  return (
    `cgroup driver mismatch: the container runtime uses the ${runtimeDriver} driver and bootlet uses ${ours}; ` +
    `set cgroupDriver: ${runtimeDriver} in the KubeletConfiguration (or --cgroup-driver=${runtimeDriver}), ` +
    `or change the runtime (containerd: ${runcSetting} in the runc options) and restart it`
  );
}
