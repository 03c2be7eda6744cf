// Container environment as the kubelet builds it (makeEnvironmentVariables) for a static pod:
// no service links (there is no API server to list services from), no ConfigMap/Secret
// references (a static pod may not use them), `env` in order with $(VAR) expansion against the
// variables defined before it, and the downward-API fieldRef / resourceFieldRef values.
import type { Container, EnvVar, Pod } from 'kubernetes-types/core/v1';
import type { KeyValue } from '../cri/cri-types.js';
import { expandVars } from './expansion.js';
import { parseQuantity } from '../k8s/quantity.js';

export interface EnvContext {
  hostIP: string;
  podIPs: string[];
  /** Node allocatable, used for limits.* when a container sets no limit (as the kubelet). */
  nodeAllocatable: { cpuMillis: number; memoryBytes: number; ephemeralStorageBytes: number };
}

export class EnvError extends Error {
  override name = 'EnvError';
}

const SUBSCRIPT_RE = /^metadata\.(labels|annotations)\['(.*)'\]$/;

export function podFieldValue(pod: Pod, fieldPath: string, ctx: EnvContext): string {
  const md = pod.metadata ?? {};
  const sub = SUBSCRIPT_RE.exec(fieldPath);
  if (sub) {
    const map = sub[1] === 'labels' ? md.labels : md.annotations;
    return map?.[sub[2]!] ?? '';
  }
  // A host-network pod's IPs are the node's.
  const podIPs = ctx.podIPs.length > 0 ? ctx.podIPs : pod.spec?.hostNetwork && ctx.hostIP ? [ctx.hostIP] : [];
  switch (fieldPath) {
    case 'metadata.name':
      return md.name ?? '';
    case 'metadata.namespace':
      return md.namespace ?? '';
    case 'metadata.uid':
      return md.uid ?? '';
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
      return ctx.hostIP;
    case 'status.hostIPs':
      return ctx.hostIP;
    case 'status.podIP':
      return podIPs[0] ?? '';
    case 'status.podIPs':
      return podIPs.join(',');
    default:
      throw new EnvError(`unsupported fieldRef fieldPath ${JSON.stringify(fieldPath)}`);
  }
}

function resourceValue(pod: Pod, self: Container, ref: NonNullable<EnvVar['valueFrom']>['resourceFieldRef'] & object, ctx: EnvContext): string {
  const c = ref.containerName
    ? [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((x) => x.name === ref.containerName)
    : self;
  if (!c) throw new EnvError(`resourceFieldRef: no container named ${JSON.stringify(ref.containerName)}`);
  const divisor = ref.divisor !== undefined && !parseQuantity(ref.divisor).isZero() ? parseQuantity(ref.divisor) : parseQuantity('1');
  const [kind, resource] = ref.resource.split('.', 2) as [string, string];
  const set = kind === 'limits' ? c.resources?.limits : kind === 'requests' ? c.resources?.requests : undefined;
  if (set === undefined && kind !== 'limits' && kind !== 'requests') throw new EnvError(`unsupported resourceFieldRef resource ${JSON.stringify(ref.resource)}`);
  const given = set?.[resource];
  // Values are rounded up to whole divisor units, like the kubelet.
  if (resource === 'cpu') {
    const milli = given !== undefined ? parseQuantity(given).milliValue() : kind === 'limits' ? ctx.nodeAllocatable.cpuMillis : 0;
    return String(Math.ceil(milli / divisor.milliValue()));
  }
  if (resource === 'memory' || resource === 'ephemeral-storage') {
    const fallback = resource === 'memory' ? ctx.nodeAllocatable.memoryBytes : ctx.nodeAllocatable.ephemeralStorageBytes;
    const bytes = given !== undefined ? parseQuantity(given).value() : kind === 'limits' ? fallback : 0;
    return String(Math.ceil(bytes / divisor.value()));
  }
  throw new EnvError(`unsupported resourceFieldRef resource ${JSON.stringify(ref.resource)}`);
}

function envVarValue(pod: Pod, container: Container, v: EnvVar, defined: Map<string, string>, ctx: EnvContext): string {
  if (v.value) return expandVars(v.value, (n) => defined.get(n));
  const from = v.valueFrom;
  if (!from) return '';
  if (from.fieldRef) return podFieldValue(pod, from.fieldRef.fieldPath, ctx);
  if (from.resourceFieldRef) return resourceValue(pod, container, from.resourceFieldRef, ctx);
  const ns = pod.metadata?.namespace ?? '';
  if (from.configMapKeyRef) throw new EnvError(`couldn't get configMap ${ns}/${from.configMapKeyRef.name}, no kubeClient defined`);
  if (from.secretKeyRef) throw new EnvError(`couldn't get secret ${ns}/${from.secretKeyRef.name}, no kubeClient defined`);
  throw new EnvError(`env ${v.name}: unsupported valueFrom`);
}

/** Name/value pairs in first-definition order; a later entry with the same name wins. */
export function containerEnv(pod: Pod, container: Container, ctx: EnvContext): KeyValue[] {
  if (container.envFrom && container.envFrom.length > 0) {
    const src = container.envFrom[0]!;
    const ns = pod.metadata?.namespace ?? '';
    const what = src.configMapRef ? `configMap ${ns}/${src.configMapRef.name}` : `secret ${ns}/${src.secretRef?.name ?? ''}`;
    throw new EnvError(`couldn't get ${what}, no kubeClient defined`);
  }
  const defined = new Map<string, string>();
  for (const v of container.env ?? []) defined.set(v.name, envVarValue(pod, container, v, defined, ctx));
  return [...defined].map(([key, value]) => ({ key, value }));
}

/** Expands command or args against the final environment. */
export function expandCommand(args: string[] | undefined, env: KeyValue[]): string[] {
  const m = new Map(env.map((e) => [e.key, e.value]));
  return (args ?? []).map((a) => expandVars(a, (n) => m.get(n)));
}
