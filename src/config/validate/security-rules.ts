// Security contexts as the API server checks them on create (validatePodSpecSecurityContext,
// validateSysctls, ValidateHostSysctl, ValidateSecurityContext, validateHostUsers): user and group
// IDs in range; sysctl names of the kernel's form, each once, none of a namespace the pod shares
// with the host; seccomp and AppArmor profiles of a known type, a localhost one inside the
// profile root; procMount values; no `allowPrivilegeEscalation: false` beside privileged or
// CAP_SYS_ADMIN; windowsOptions of a valid form (windows-options-rules.ts); a pod without the host's
// user namespace shares no host namespace and has no block device. A sysctl or profile path goes to
// the runtime as it is.
import type { AppArmorProfile, PodSpec, SeccompProfile, SecurityContext } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { isValidID } from './api-formats';
import { duplicate, forbidden, goStruct, invalid, required, tooLong, unsupported } from './field-errors';
import { localDescendingPath } from './path-rules';
import { containersWithPaths } from './pod-containers';
import { validateWindowsOptions } from './windows-options-rules';

const SYSCTL_SEGMENT = '[a-z0-9]([-_a-z0-9]*[a-z0-9])?';
/** As the API server prints it in its message. */
const SYSCTL_NAME_PATTERN = `^(${SYSCTL_SEGMENT}[\\./])*${SYSCTL_SEGMENT}$`;
const SYSCTL_NAME = new RegExp(SYSCTL_NAME_PATTERN);
const SYSCTL_MAX_LENGTH = 253;
const SECCOMP_TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined'] as const;
const APPARMOR_TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined'] as const;
const PROC_MOUNT_TYPES = ['Default', 'Unmasked'] as const;
const FS_GROUP_CHANGE_POLICIES = ['Always', 'OnRootMismatch'] as const;
const SUPPLEMENTAL_GROUPS_POLICIES = ['Merge', 'Strict'] as const;
const HOST_USERS_FALSE = 'when `hostUsers` is false';
/** PATH_MAX - 1. */
const MAX_LOCALHOST_PROFILE_LENGTH = 4095;

/** Go's strings.TrimSpace: unicode.IsSpace at both ends. */
export const goTrimSpace = (s: string): string =>
  s.replace(
    /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g,
    '',
  );

/** The kernel namespace a sysctl belongs to (sysctl.GetNamespace), slash form normalised to dots. */
function sysctlNamespace(name: string): 'net' | 'ipc' | undefined {
  const firstSep = /[./]/.exec(name)?.[0];
  const dotted = firstSep === '/' ? name.replace(/[./]/g, (c) => (c === '/' ? '.' : '/')) : name;
  if (dotted === 'kernel.sem' || ['kernel.shm', 'kernel.msg', 'fs.mqueue.'].some((p) => dotted.startsWith(p)))
    return 'ipc';
  return dotted.startsWith('net.') ? 'net' : undefined;
}

function ids(
  sc: { runAsUser?: number; runAsGroup?: number; fsGroup?: number } | undefined,
  p: readonly PathPart[],
  out: string[],
): void {
  for (const k of ['fsGroup', 'runAsUser', 'runAsGroup'] as const) {
    const v = sc?.[k];
    if (v !== undefined) for (const m of isValidID(v)) out.push(invalid([...p, k], v, m));
  }
}

/** validateSeccompProfileField. */
function seccompProfile(sp: SeccompProfile | undefined, p: readonly PathPart[], out: string[]): void {
  if (!sp) return;
  if (!sp.type) out.push(required([...p, 'type'], 'type is required when seccompProfile is set'));
  else if (!(SECCOMP_TYPES as readonly string[]).includes(sp.type))
    out.push(unsupported([...p, 'type'], sp.type, SECCOMP_TYPES));
  if (sp.type === 'Localhost') {
    if (sp.localhostProfile === undefined || sp.localhostProfile === null)
      out.push(required([...p, 'localhostProfile'], 'must be set when seccomp type is Localhost'));
    else localDescendingPath([...p, 'localhostProfile'], sp.localhostProfile, out);
  } else if (sp.localhostProfile !== undefined && sp.localhostProfile !== null)
    out.push(
      invalid(
        [...p, 'localhostProfile'],
        goStruct('core.SeccompProfile', sp),
        'can only be set when seccomp type is Localhost',
      ),
    );
}

/** ValidateAppArmorProfileField. */
function appArmorProfile(ap: AppArmorProfile | undefined, p: readonly PathPart[], out: string[]): void {
  if (!ap) return;
  const lp = [...p, 'localhostProfile'];
  if (ap.type === 'Localhost') {
    const profile = ap.localhostProfile;
    if (profile === undefined) return void out.push(required(lp, 'must be set when AppArmor type is Localhost'));
    if (goTrimSpace(profile) !== profile) out.push(invalid(lp, profile, 'must not be padded with whitespace'));
    else if (profile === '') out.push(required(lp, 'must be set when AppArmor type is Localhost'));
    if (Buffer.byteLength(profile, 'utf8') > MAX_LOCALHOST_PROFILE_LENGTH)
      out.push(tooLong(lp, MAX_LOCALHOST_PROFILE_LENGTH));
  } else if (ap.type === 'RuntimeDefault' || ap.type === 'Unconfined') {
    if (ap.localhostProfile !== undefined)
      out.push(invalid(lp, ap.localhostProfile, 'can only be set when AppArmor type is Localhost'));
  } else if (!ap.type) out.push(required([...p, 'type'], 'type is required when appArmorProfile is set'));
  else out.push(unsupported([...p, 'type'], ap.type, APPARMOR_TYPES));
}

function sysctls(spec: PodSpec, p: readonly PathPart[], hostSysctlsChecked: boolean, out: string[]): void {
  const seen = new Set<string>();
  (spec.securityContext?.sysctls ?? []).forEach((s, i) => {
    const np = [...p, i, 'name'];
    if (!s.name) out.push(required(np));
    else if (Buffer.byteLength(s.name, 'utf8') > SYSCTL_MAX_LENGTH || !SYSCTL_NAME.test(s.name)) {
      out.push(
        invalid(np, s.name, `must have at most ${SYSCTL_MAX_LENGTH} characters and match regex ${SYSCTL_NAME_PATTERN}`),
      );
    } else if (seen.has(s.name)) out.push(duplicate(np, s.name));
    if (hostSysctlsChecked) {
      const ns = sysctlNamespace(s.name ?? '');
      if (spec.hostNetwork && ns === 'net')
        out.push(invalid(np, s.name, "may not be specified when 'hostNetwork' is true"));
      else if (spec.hostIPC && ns === 'ipc')
        out.push(invalid(np, s.name, "may not be specified when 'hostIPC' is true"));
    }
    seen.add(s.name);
  });
}

/**
 * spec.securityContext and the host namespaces a pod without its own user namespace may not share.
 * `hostSysctlsChecked`: a pod created before the API server refused namespaced sysctls on a host
 * network or IPC keeps them (an API pod); a new one may not (a static pod is always new).
 */
export function validatePodSecurityContext(spec: PodSpec, hostSysctlsChecked: boolean): string[] {
  const out: string[] = [];
  const p: PathPart[] = ['spec', 'securityContext'];
  const sc = spec.securityContext;
  if (sc) {
    ids(sc, p, out);
    (sc.supplementalGroups ?? []).forEach((g, i) => {
      for (const m of isValidID(g)) out.push(invalid([...p, 'supplementalGroups', i], g, m));
    });
    if (spec.shareProcessNamespace && spec.hostPID)
      out.push(
        invalid([...p, 'shareProcessNamespace'], true, 'ShareProcessNamespace and HostPID cannot both be enabled'),
      );
    sysctls(spec, [...p, 'sysctls'], hostSysctlsChecked, out);
    const policy = sc.fsGroupChangePolicy;
    if (policy !== undefined && !(FS_GROUP_CHANGE_POLICIES as readonly string[]).includes(policy))
      out.push(unsupported([...p, 'fsGroupChangePolicy'], policy, FS_GROUP_CHANGE_POLICIES));
    seccompProfile(sc.seccompProfile, [...p, 'seccompProfile'], out);
    appArmorProfile(sc.appArmorProfile, [...p, 'appArmorProfile'], out);
  }
  if (sc?.windowsOptions) validateWindowsOptions(sc.windowsOptions, [...p, 'windowsOptions'], out);
  const newer = (sc ?? {}) as { supplementalGroupsPolicy?: string; seLinuxChangePolicy?: string };
  if (newer.supplementalGroupsPolicy !== undefined && newer.supplementalGroupsPolicy !== null)
    if (!(SUPPLEMENTAL_GROUPS_POLICIES as readonly string[]).includes(newer.supplementalGroupsPolicy))
      out.push(
        unsupported([...p, 'supplementalGroupsPolicy'], newer.supplementalGroupsPolicy, SUPPLEMENTAL_GROUPS_POLICIES),
      );
  // SELinuxMount is off by default in 1.36, so the API server takes only Recursive.
  if (newer.seLinuxChangePolicy !== undefined && newer.seLinuxChangePolicy !== null)
    if (newer.seLinuxChangePolicy !== 'Recursive')
      out.push(unsupported([...p, 'seLinuxChangePolicy'], newer.seLinuxChangePolicy, ['Recursive']));
  if (spec.hostUsers === false) {
    // The API server's own spelling of the last two. UserNamespacesHostNetworkSupport is alpha
    // (off) in 1.36, so a host network is refused too.
    if (spec.hostNetwork) out.push(forbidden(['spec', 'hostNetwork'], HOST_USERS_FALSE));
    if (spec.hostPID) out.push(forbidden(['spec', 'HostPID'], HOST_USERS_FALSE));
    if (spec.hostIPC) out.push(forbidden(['spec', 'HostIPC'], HOST_USERS_FALSE));
    // Block devices take neither idmapped mounts nor a chown.
    for (const [c, cp] of containersWithPaths(spec))
      if ((c.volumeDevices ?? []).length > 0) out.push(forbidden([...cp, 'volumeDevices'], HOST_USERS_FALSE));
  }
  return out;
}

/** A container's securityContext (ValidateSecurityContext); `hostUsers`: the pod shares the host's user namespace. */
export function validateContainerSecurityContext(
  sc: SecurityContext | undefined,
  p: readonly PathPart[],
  hostUsers: boolean,
  out: string[],
): void {
  if (!sc) return;
  ids(sc, p, out);
  const pm = sc.procMount;
  if (pm !== undefined) {
    if (!(PROC_MOUNT_TYPES as readonly string[]).includes(pm))
      out.push(unsupported([...p, 'procMount'], pm, PROC_MOUNT_TYPES));
    if (hostUsers && pm === 'Unmasked')
      out.push(invalid([...p, 'procMount'], pm, '`hostUsers` must be false to use `Unmasked`'));
  }
  seccompProfile(sc.seccompProfile, [...p, 'seccompProfile'], out);
  // A container cannot be kept from gaining privileges it is given outright.
  if (sc.allowPrivilegeEscalation === false) {
    const shown = goStruct('core.SecurityContext', sc);
    if (sc.privileged === true)
      out.push(invalid(p, shown, 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true'));
    for (const cap of sc.capabilities?.add ?? [])
      if (cap === 'CAP_SYS_ADMIN')
        out.push(
          invalid(p, shown, 'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN'),
        );
  }
  validateWindowsOptions(sc.windowsOptions, [...p, 'windowsOptions'], out);
  appArmorProfile(sc.appArmorProfile, [...p, 'appArmorProfile'], out);
}
