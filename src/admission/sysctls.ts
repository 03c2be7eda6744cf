// The kubelet's sysctl admit handler: every sysctl a pod sets must be on the node's allowlist (the
// safe sysctls and the operator's allowedUnsafeSysctls, names or prefixes ending in '*'), and one
// kept to the network or IPC namespace is refused to a pod that shares that namespace with the host.
import type { Pod } from 'kubernetes-types/core/v1';
import { sysctlNamespace, sysctlPatternProblem, sysctlWithDots, type SysctlNamespace } from '../k8s/sysctls.js';

export interface SysctlAllowlist {
  readonly names: ReadonlyMap<string, SysctlNamespace>;
  readonly prefixes: readonly (readonly [string, SysctlNamespace])[];
}

/** The allowlist of these names and patterns; throws on one the settings would have refused. */
export function sysctlAllowlist(patterns: readonly string[]): SysctlAllowlist {
  const names = new Map<string, SysctlNamespace>();
  const prefixes: [string, SysctlNamespace][] = [];
  for (const p of patterns) {
    const problem = sysctlPatternProblem(p);
    if (problem !== undefined) throw new Error(problem);
    const s = sysctlWithDots(p);
    // Checked above: the name or prefix is namespaced.
    if (s.endsWith('*')) prefixes.push([s.slice(0, -1), sysctlNamespace(s.slice(0, -1))!]);
    else names.set(s, sysctlNamespace(s)!);
  }
  return { names, prefixes };
}

/** Go's %q of a sysctl name (a valid one has nothing JSON and Go escape differently). */
const quoted = (s: string): string => JSON.stringify(s);

/** Why the pod may not set its sysctls here (the message after "forbidden sysctl: "), if it may not. */
function sysctlProblem(
  name: string,
  allow: SysctlAllowlist,
  hostNetwork: boolean,
  hostIPC: boolean,
): string | undefined {
  const s = sysctlWithDots(name);
  const ns = allow.names.get(s) ?? allow.prefixes.find(([p]) => s.startsWith(p))?.[1];
  if (ns === undefined) return `${quoted(s)} not allowlisted`;
  if ((ns === 'ipc' && hostIPC) || (ns === 'net' && hostNetwork))
    return `${quoted(s)} not allowed with host ${ns} enabled`;
  return undefined;
}

/** The refusal's message for the first sysctl the pod may not set, if any. */
export function forbiddenSysctl(pod: Pod, allow: SysctlAllowlist): string | undefined {
  const spec = pod.spec;
  for (const s of spec?.securityContext?.sysctls ?? []) {
    const problem = sysctlProblem(s.name, allow, spec?.hostNetwork === true, spec?.hostIPC === true);
    if (problem !== undefined) return `forbidden sysctl: ${problem}`;
  }
  return undefined;
}
