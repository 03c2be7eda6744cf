// Sysctls as the kubelet judges them: the safe ones every pod may set (pkg/kubelet/sysctl,
// safe_sysctls.go: some only on a kernel that namespaces them), the kernel namespace a sysctl lives
// in (component-helpers' NamespacedBy: only those are ever allowed, safe or not), the '/' spelling
// sysctl(8) accepts, and the pattern an allowedUnsafeSysctls entry must match. The settings table
// checks allowedUnsafeSysctls with these, and admission refuses a pod with them.

/** A sysctl kept to its namespace; a pod sharing that namespace with the host may not set it. */
export type SysctlNamespace = 'ipc' | 'net';

/** The safe sysctls, with the kernel release that made each namespaced when that is not every kernel. */
const SAFE_SYSCTLS: readonly { readonly name: string; readonly kernel?: readonly [number, number] }[] = [
  { name: 'kernel.shm_rmid_forced' },
  { name: 'net.ipv4.ip_local_port_range' },
  { name: 'net.ipv4.tcp_syncookies' },
  { name: 'net.ipv4.ping_group_range' },
  { name: 'net.ipv4.ip_unprivileged_port_start' },
  { name: 'net.ipv4.ip_local_reserved_ports', kernel: [3, 16] },
  { name: 'net.ipv4.tcp_keepalive_time', kernel: [4, 5] },
  { name: 'net.ipv4.tcp_fin_timeout', kernel: [4, 6] },
  { name: 'net.ipv4.tcp_keepalive_intvl', kernel: [4, 5] },
  { name: 'net.ipv4.tcp_keepalive_probes', kernel: [4, 5] },
  { name: 'net.ipv4.tcp_rmem' },
  { name: 'net.ipv4.tcp_wmem' },
];

/** The safe sysctls on a kernel of this release (os.release()); an unreadable release keeps only those every kernel has. */
export function safeSysctls(kernelRelease: string): string[] {
  const m = /^(\d+)\.(\d+)/.exec(kernelRelease);
  const have = m ? [Number(m[1]), Number(m[2])] : undefined;
  const atLeast = (want: readonly [number, number]): boolean =>
    have !== undefined && (have[0]! > want[0] || (have[0] === want[0] && have[1]! >= want[1]));
  return SAFE_SYSCTLS.filter((s) => s.kernel === undefined || atLeast(s.kernel)).map((s) => s.name);
}

const NAMESPACED_EXACT: Readonly<Record<string, SysctlNamespace>> = { 'kernel.sem': 'ipc' };
const NAMESPACED_PREFIXES: readonly (readonly [string, SysctlNamespace])[] = [
  ['kernel.shm', 'ipc'],
  ['kernel.msg', 'ipc'],
  ['fs.mqueue.', 'ipc'],
  ['net.', 'net'],
];

/** The kernel namespace of a sysctl (or of a pattern's prefix), undefined when it is not known to be namespaced. */
export function sysctlNamespace(name: string): SysctlNamespace | undefined {
  const exact = NAMESPACED_EXACT[name];
  if (exact) return exact;
  return NAMESPACED_PREFIXES.find(([p]) => name.startsWith(p))?.[1];
}

/**
 * A name written with '/' as its first separator (`net/ipv4/ip_forward`) in the dotted form:
 * the two separators trade places, so a dot inside a segment (an interface `eno2.100`) becomes '/'.
 */
export function sysctlWithDots(name: string): string {
  const first = name.search(/[./]/);
  if (first < 0 || name[first] === '.') return name;
  return name.replace(/[./]/g, (c) => (c === '.' ? '/' : '.'));
}

/** validation.SysctlMaxLength. */
export const SYSCTL_MAX_LENGTH = 253;
const SEGMENT = '[a-z0-9]([-_a-z0-9]*[a-z0-9])?';
const PATTERN_LAST_SEGMENT = '([a-z0-9][-_a-z0-9]*)?[a-z0-9*]';
/** policy validation's SysctlContainSlashPatternFmt, as the kubelet's error prints it. */
export const SYSCTL_PATTERN_FORMAT = `(${SEGMENT}[\\./])*${PATTERN_LAST_SEGMENT}`;
const SYSCTL_PATTERN = new RegExp(`^${SYSCTL_PATTERN_FORMAT}$`);

/** IsValidSysctlPattern: a sysctl name, or a prefix ending in '*'. */
export function isValidSysctlPattern(pattern: string): boolean {
  return pattern.length <= SYSCTL_MAX_LENGTH && SYSCTL_PATTERN.test(pattern);
}

/** Why the kubelet refuses this allowlist entry at start (NewAllowlist's words), if it does. */
export function sysctlPatternProblem(pattern: string): string | undefined {
  if (!isValidSysctlPattern(pattern))
    return `sysctl ${JSON.stringify(pattern)} must have at most ${SYSCTL_MAX_LENGTH} characters and match regex ${SYSCTL_PATTERN_FORMAT}`;
  const s = sysctlWithDots(pattern);
  if (s.endsWith('*'))
    return sysctlNamespace(s.slice(0, -1)) === undefined
      ? `the sysctls ${JSON.stringify(s)} are not known to be namespaced`
      : undefined;
  return sysctlNamespace(s) === undefined
    ? `the sysctl ${JSON.stringify(s)} are not known to be namespaced`
    : undefined;
}
