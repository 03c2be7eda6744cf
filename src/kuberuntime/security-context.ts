// The container's Linux security context: the pod's securityContext merged under the
// container's (DetermineEffectiveSecurityContext), then mapped to CRI as the kubelet does.
import type { Container, Pod, SeccompProfile, SecurityContext, SELinuxOptions } from 'kubernetes-types/core/v1';
import path from 'node:path';
import {
  SecurityProfileType,
  SupplementalGroupsPolicy,
  type LinuxContainerSecurityContext,
  type NamespaceOption,
  type SecurityProfile,
  type SELinuxOption,
} from '../cri/cri-types.js';
import {
  APPARMOR_LOCALHOST_PREFIX,
  APPARMOR_RUNTIME_DEFAULT,
  APPARMOR_UNCONFINED,
  appArmorProfileOf,
} from '../k8s/apparmor.js';
import { namespacesForPod } from './namespaces.js';

/** What runc / Docker mask by default; the kubelet sends these unless procMount is Unmasked. */
export const DEFAULT_MASKED_PATHS: readonly string[] = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];
export const DEFAULT_READONLY_PATHS: readonly string[] = [
  '/proc/bus',
  '/proc/fs',
  '/proc/irq',
  '/proc/sys',
  '/proc/sysrq-trigger',
];

export const DEFAULT_SECCOMP_PROFILE_ROOT = '/var/lib/kubelet/seccomp';

export interface SecurityOptions {
  /** <rootDir>/seccomp: where Localhost profiles live. */
  seccompProfileRoot?: string;
  /** KubeletConfiguration seccompDefault: RuntimeDefault instead of Unconfined when nothing is set. */
  seccompDefault?: boolean;
  /** The image's numeric user / user name, used when the pod sets no runAsUser (as the kubelet). */
  imageUid?: number;
  imageUsername?: string;
  /** The pod's namespaces with its user namespace (pod-isolation.ts); default: namespacesForPod alone. */
  namespaceOptions?: NamespaceOption;
}

/** The CRI's SELinux label: the four parts as given, empty where unset. */
export function seLinuxOption(o: SELinuxOptions | undefined): SELinuxOption | undefined {
  return o ? { user: o.user ?? '', role: o.role ?? '', type: o.type ?? '', level: o.level ?? '' } : undefined;
}

/**
 * The container's AppArmor profile (getAppArmorProfile): the field, and the deprecated string the
 * kubelet still sends for runtimes that predate it; none when the pod asks for none.
 */
export function appArmorProfile(
  pod: Pod,
  container: Container,
): { apparmor?: SecurityProfile; apparmorProfile?: string } {
  const p = appArmorProfileOf(pod, container);
  switch (p?.type) {
    case undefined:
      return {};
    case 'RuntimeDefault':
      return {
        apparmor: { profileType: SecurityProfileType.RuntimeDefault, localhostRef: '' },
        apparmorProfile: APPARMOR_RUNTIME_DEFAULT,
      };
    case 'Unconfined':
      return {
        apparmor: { profileType: SecurityProfileType.Unconfined, localhostRef: '' },
        apparmorProfile: APPARMOR_UNCONFINED,
      };
    case 'Localhost': {
      // Validation and AppArmor admission refuse a Localhost profile without a name.
      const name = p.localhostProfile ?? '';
      return {
        apparmor: { profileType: SecurityProfileType.Localhost, localhostRef: name },
        apparmorProfile: APPARMOR_LOCALHOST_PREFIX + name,
      };
    }
    default:
      throw new Error(`unknown apparmor profile type: ${JSON.stringify(p?.type)}`);
  }
}

function toProfile(p: SeccompProfile, root: string): SecurityProfile {
  if (p.type === 'Localhost')
    return { profileType: SecurityProfileType.Localhost, localhostRef: path.join(root, p.localhostProfile ?? '') };
  if (p.type === 'Unconfined') return { profileType: SecurityProfileType.Unconfined, localhostRef: '' };
  return { profileType: SecurityProfileType.RuntimeDefault, localhostRef: '' };
}

/** Container profile over pod profile over the node default. */
export function seccompProfile(pod: Pod, container: Container, opts: SecurityOptions = {}): SecurityProfile {
  const root = opts.seccompProfileRoot ?? DEFAULT_SECCOMP_PROFILE_ROOT;
  const p = container.securityContext?.seccompProfile ?? pod.spec?.securityContext?.seccompProfile;
  if (p) return toProfile(p, root);
  return {
    profileType: opts.seccompDefault ? SecurityProfileType.RuntimeDefault : SecurityProfileType.Unconfined,
    localhostRef: '',
  };
}

/** Pod-level user settings apply unless the container sets its own. */
export function effectiveSecurityContext(pod: Pod, container: Container): SecurityContext {
  const p = pod.spec?.securityContext ?? {};
  const c = container.securityContext ?? {};
  return {
    ...c,
    runAsUser: c.runAsUser ?? p.runAsUser,
    runAsGroup: c.runAsGroup ?? p.runAsGroup,
    runAsNonRoot: c.runAsNonRoot ?? p.runAsNonRoot,
    seLinuxOptions: c.seLinuxOptions ?? p.seLinuxOptions,
  };
}

/**
 * The pod's supplementalGroupsPolicy as the CRI spells it (KEP-3619), for the sandbox and each
 * container: Strict leaves out the groups of the image's /etc/group; unset is Merge.
 */
export function supplementalGroupsPolicyOf(pod: Pod): SupplementalGroupsPolicy {
  return pod.spec?.securityContext?.supplementalGroupsPolicy === 'Strict'
    ? SupplementalGroupsPolicy.Strict
    : SupplementalGroupsPolicy.Merge;
}

export function containerSecurityContext(
  pod: Pod,
  container: Container,
  opts: SecurityOptions = {},
): LinuxContainerSecurityContext {
  const sc = effectiveSecurityContext(pod, container);
  const podSc = pod.spec?.securityContext;
  const supplementalGroups: number[] = [];
  if (podSc?.fsGroup != null) supplementalGroups.push(podSc.fsGroup);
  for (const g of podSc?.supplementalGroups ?? []) supplementalGroups.push(g);
  const unmasked = sc.procMount === 'Unmasked';
  const out: LinuxContainerSecurityContext = {
    privileged: sc.privileged === true,
    readonlyRootfs: sc.readOnlyRootFilesystem === true,
    namespaceOptions: opts.namespaceOptions ?? namespacesForPod(pod),
    supplementalGroups,
    supplementalGroupsPolicy: supplementalGroupsPolicyOf(pod),
    // Only an explicit allowPrivilegeEscalation: false sets no_new_privs.
    noNewPrivs: sc.allowPrivilegeEscalation === false,
    // Sent for privileged containers too, as the kubelet does; the runtime drops them there.
    maskedPaths: unmasked ? [] : [...DEFAULT_MASKED_PATHS],
    readonlyPaths: unmasked ? [] : [...DEFAULT_READONLY_PATHS],
    seccomp: seccompProfile(pod, container, opts),
    ...appArmorProfile(pod, container),
  };
  const selinux = seLinuxOption(sc.seLinuxOptions);
  if (selinux) out.selinuxOptions = selinux;
  if (sc.capabilities) {
    // Names go through as written ("NET_ADMIN"); the runtime adds the CAP_ prefix.
    out.capabilities = {
      addCapabilities: [...(sc.capabilities.add ?? [])],
      dropCapabilities: [...(sc.capabilities.drop ?? [])],
    };
  }
  if (sc.runAsUser != null) out.runAsUser = { value: sc.runAsUser };
  else {
    if (opts.imageUid !== undefined) out.runAsUser = { value: opts.imageUid };
    if (opts.imageUsername) out.runAsUsername = opts.imageUsername;
  }
  if (sc.runAsGroup != null) out.runAsGroup = { value: sc.runAsGroup };
  return out;
}

export class RunAsNonRootError extends Error {
  override name = 'RunAsNonRootError';
}

/** runAsNonRoot needs the image's user, so the caller checks it after ImageStatus. */
export function verifyRunAsNonRoot(
  pod: Pod,
  container: Container,
  imageUid: number | undefined,
  imageUsername: string,
): void {
  const sc = effectiveSecurityContext(pod, container);
  if (sc.runAsNonRoot !== true) return;
  const where = `(pod: ${JSON.stringify(`${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? ''}(${pod.metadata?.uid ?? ''})`)}, container: ${container.name})`;
  if (sc.runAsUser != null) {
    if (sc.runAsUser === 0) throw new RunAsNonRootError(`container's runAsUser breaks non-root policy ${where}`);
    return;
  }
  if (imageUid === undefined && imageUsername) {
    throw new RunAsNonRootError(
      `container has runAsNonRoot and image has non-numeric user (${imageUsername}), cannot verify user is non-root ${where}`,
    );
  }
  if (imageUid === 0 || imageUid === undefined)
    throw new RunAsNonRootError(`container has runAsNonRoot and image will run as root ${where}`);
}
