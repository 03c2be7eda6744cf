// spec.os as the API server checks it (validateOS, validateLinux, validateWindows): a name of linux
// or windows; a linux pod sets no windowsOptions, a windows pod none of the Linux-only fields of the
// pod's or a container's securityContext, nor the host namespaces and hostUsers. Only a pod whose
// OS is set and valid is held to one OS.
import type { PodSpec } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { forbidden, required, unsupported } from './field-errors';
import { containersWithPaths } from './pod-containers';

/** Sorted, as the API server lists them. */
const OS_NAMES = ['linux', 'windows'] as const;
const LINUX = 'windows options cannot be set for a linux pod';
const WINDOWS = 'cannot be set for a windows pod';

/** The pod securityContext's Linux-only fields, as v1 names them (the last two are newer than kubernetes-types). */
const POD_LINUX_FIELDS = [
  'appArmorProfile',
  'seLinuxOptions',
  'seccompProfile',
  'fsGroup',
  'fsGroupChangePolicy',
  'sysctls',
  'runAsUser',
  'runAsGroup',
  'supplementalGroups',
  'supplementalGroupsPolicy',
  'seLinuxChangePolicy',
] as const;
const CONTAINER_LINUX_FIELDS = [
  'appArmorProfile',
  'seLinuxOptions',
  'seccompProfile',
  'capabilities',
  'readOnlyRootFilesystem',
  'privileged',
  'allowPrivilegeEscalation',
  'procMount',
  'runAsUser',
  'runAsGroup',
] as const;

const isSet = (v: unknown): boolean => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);

function windows(spec: PodSpec, out: string[]): void {
  const sc = (spec.securityContext ?? {}) as Record<string, unknown>;
  const at = (p: PathPart[]): void => void out.push(forbidden(p, WINDOWS));
  // In the API server's order: the host fields sit between the securityContext ones there.
  for (const k of POD_LINUX_FIELDS.slice(0, 2)) if (isSet(sc[k])) at(['spec', 'securityContext', k]);
  if (isSet(spec.hostUsers)) at(['spec', 'hostUsers']);
  if (spec.hostPID) at(['spec', 'hostPID']);
  if (spec.hostIPC) at(['spec', 'hostIPC']);
  for (const k of POD_LINUX_FIELDS.slice(2, 6)) if (isSet(sc[k])) at(['spec', 'securityContext', k]);
  if (isSet(spec.shareProcessNamespace)) at(['spec', 'shareProcessNamespace']);
  for (const k of POD_LINUX_FIELDS.slice(6)) if (isSet(sc[k])) at(['spec', 'securityContext', k]);
  for (const [c, p] of containersWithPaths(spec)) {
    const csc = c.securityContext as Record<string, unknown> | undefined;
    if (!csc) continue;
    for (const k of CONTAINER_LINUX_FIELDS) if (isSet(csc[k])) at([...p, 'securityContext', k]);
  }
}

function linux(spec: PodSpec, out: string[]): void {
  if (spec.securityContext?.windowsOptions) out.push(forbidden(['spec', 'securityContext', 'windowsOptions'], LINUX));
  for (const [c, p] of containersWithPaths(spec))
    if (c.securityContext?.windowsOptions) out.push(forbidden([...p, 'securityContext', 'windowsOptions'], LINUX));
}

export function validateOS(spec: PodSpec, out: string[]): void {
  const os = spec.os;
  if (!os) return;
  if (!os.name) return void out.push(required(['spec', 'os', 'name']));
  if (os.name === 'linux') linux(spec, out);
  else if (os.name === 'windows') windows(spec, out);
  else out.push(unsupported(['spec', 'os'], os.name, OS_NAMES));
}
