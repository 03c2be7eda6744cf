// Container environment as the kubelet builds it (makeEnvironmentVariables): envFrom and env with
// their ConfigMap and Secret references (fetched beforehand, env-objects.ts), the downward-API
// fieldRef / resourceFieldRef values, $(VAR) expansion, and the service variables. Without an API
// server (no objects) a reference fails as the kubelet without a client fails it.
import type { ConfigMap, Container, EnvFromSource, EnvVar, Pod, Secret } from 'kubernetes-types/core/v1';
import type { KeyValue } from '../cri/cri-types.js';
import type { EnvObjects, Fetched } from './env-objects.js';
import { expandVars } from './expansion.js';
import { DownwardApiError, metadataFieldValue, resourceFieldValue } from '../k8s/downward-api.js';
import type { NodeAllocatable } from '../k8s/node-allocatable.js';

export interface EnvContext {
  hostIP: string;
  podIPs: string[];
  /** Node allocatable, used for limits.* when a container sets no limit (as the kubelet). */
  nodeAllocatable: NodeAllocatable;
  /** The API objects the env refers to; undefined when there is no API server. */
  objects?: EnvObjects;
  /** Keys of an envFrom source that were skipped, for a Warning event on the pod. */
  onWarning?: (w: EnvWarning) => void;
}

export class EnvError extends Error {
  override name = 'EnvError';
}

export function podFieldValue(pod: Pod, fieldPath: string, ctx: EnvContext): string {
  const own = metadataFieldValue(pod, fieldPath);
  if (own !== undefined) return own;
  // A host-network pod's IPs are the node's.
  const podIPs = ctx.podIPs.length > 0 ? ctx.podIPs : pod.spec?.hostNetwork && ctx.hostIP ? [ctx.hostIP] : [];
  switch (fieldPath) {
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

function resourceValue(
  pod: Pod,
  self: Container,
  ref: NonNullable<EnvVar['valueFrom']>['resourceFieldRef'] & object,
  ctx: EnvContext,
): string {
  const c = ref.containerName
    ? [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((x) => x.name === ref.containerName)
    : self;
  if (!c) throw new EnvError(`resourceFieldRef: no container named ${JSON.stringify(ref.containerName)}`);
  // The downwardAPI volume's own rules and the node's allocatable, so env and volume never differ.
  try {
    return resourceFieldValue(c, ref, ctx.nodeAllocatable);
  } catch (err) {
    throw err instanceof DownwardApiError ? new EnvError(err.message) : err;
  }
}

/** A variable the envFrom of a container cannot pass on, reported with the kubelet's event. */
export interface EnvWarning {
  readonly reason: 'InvalidEnvironmentVariableNames';
  readonly message: string;
}

/**
 * The names a runtime can take (the API's relaxed rule of v1.34: printable ASCII without '=').
 * The API's own checks make every key of a ConfigMap or Secret pass; this guards the env from an
 * object that did not come through them, as the kubelet skipped such keys before v1.34.
 */
function isEnvVarName(name: string): boolean {
  return /^[\x20-\x3c\x3e-\x7e]+$/.test(name);
}

function decodeSecretValue(b64: string): string {
  return Buffer.from(b64, 'base64').toString('utf8');
}

type ObjectKind = 'configMap' | 'secret';

/** The object a reference names, or undefined when it is optional and absent (the reference is then skipped). */
function referenced<T>(
  kind: ObjectKind,
  name: string,
  optional: boolean | undefined,
  ns: string,
  ctx: EnvContext,
): T | undefined {
  const objects = ctx.objects;
  if (!objects) throw new EnvError(`couldn't get ${kind} ${ns}/${name}, no kubeClient defined`);
  const got = (kind === 'configMap' ? objects.configMaps.get(name) : objects.secrets.get(name)) as
    Fetched<T> | undefined;
  if (got === undefined) throw new EnvError(`${kind} ${ns}/${name} was not fetched`);
  if ('found' in got) return got.found;
  if ('error' in got) throw new EnvError(got.error);
  if (optional === true) return undefined;
  throw new EnvError(`${kind.toLowerCase()} ${JSON.stringify(name)} not found`);
}

/** undefined: an optional reference that is skipped. */
function envVarValue(
  pod: Pod,
  container: Container,
  v: EnvVar,
  lookup: (name: string) => string | undefined,
  ctx: EnvContext,
): string | undefined {
  if (v.value) return expandVars(v.value, lookup);
  const from = v.valueFrom;
  if (!from) return '';
  if (from.fieldRef) return podFieldValue(pod, from.fieldRef.fieldPath, ctx);
  if (from.resourceFieldRef) return resourceValue(pod, container, from.resourceFieldRef, ctx);
  const ns = pod.metadata?.namespace ?? '';
  if (from.configMapKeyRef) {
    const { name = '', key, optional } = from.configMapKeyRef;
    const cm = referenced<ConfigMap>('configMap', name, optional, ns, ctx);
    if (!cm) return undefined;
    const value = cm.data?.[key];
    if (value !== undefined) return value;
    if (optional === true) return undefined;
    throw new EnvError(`couldn't find key ${key} in ConfigMap ${ns}/${name}`);
  }
  if (from.secretKeyRef) {
    const { name = '', key, optional } = from.secretKeyRef;
    const secret = referenced<Secret>('secret', name, optional, ns, ctx);
    if (!secret) return undefined;
    const value = secret.data?.[key];
    if (value !== undefined) return decodeSecretValue(value);
    if (optional === true) return undefined;
    throw new EnvError(`couldn't find key ${key} in Secret ${ns}/${name}`);
  }
  throw new EnvError(`env ${v.name}: unsupported valueFrom`);
}

function addEnvFrom(pod: Pod, src: EnvFromSource, into: Map<string, string>, ctx: EnvContext): void {
  const ns = pod.metadata?.namespace ?? '';
  let kind: ObjectKind;
  let name: string;
  let data: Record<string, string>;
  if (src.configMapRef) {
    kind = 'configMap';
    name = src.configMapRef.name ?? '';
    const cm = referenced<ConfigMap>(kind, name, src.configMapRef.optional, ns, ctx);
    if (!cm) return;
    data = cm.data ?? {};
  } else if (src.secretRef) {
    kind = 'secret';
    name = src.secretRef.name ?? '';
    const secret = referenced<Secret>(kind, name, src.secretRef.optional, ns, ctx);
    if (!secret) return;
    data = Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, decodeSecretValue(v)]));
  } else {
    return;
  }
  const invalid: string[] = [];
  // Keys in name order: an object's data has no order of its own.
  for (const key of Object.keys(data).sort()) {
    const envName = (src.prefix ?? '') + key;
    if (!isEnvVarName(envName)) {
      invalid.push(envName);
      continue;
    }
    into.set(envName, data[key]!);
  }
  if (invalid.length > 0) {
    ctx.onWarning?.({
      reason: 'InvalidEnvironmentVariableNames',
      message: `Keys [${invalid.sort().join(', ')}] from the EnvFrom ${kind} ${ns}/${name} were skipped since they are considered invalid environment variable names.`,
    });
  }
}

/**
 * Name/value pairs as makeEnvironmentVariables makes them: envFrom in order (a later source wins),
 * then env in order (over envFrom; a later entry with the same name wins, keeping its first place),
 * $(VAR) in a value expanded against what is defined so far and then the service variables, and
 * last the service variables the container did not define itself.
 */
export function containerEnv(pod: Pod, container: Container, ctx: EnvContext): KeyValue[] {
  const defined = new Map<string, string>();
  for (const src of container.envFrom ?? []) addEnvFrom(pod, src, defined, ctx);
  const serviceEnv = ctx.objects?.serviceEnv ?? new Map<string, string>();
  const lookup = (n: string) => defined.get(n) ?? serviceEnv.get(n);
  for (const v of container.env ?? []) {
    const value = envVarValue(pod, container, v, lookup, ctx);
    if (value !== undefined) defined.set(v.name, value);
  }
  const out = [...defined].map(([key, value]) => ({ key, value }));
  for (const [key, value] of serviceEnv) if (!defined.has(key)) out.push({ key, value });
  return out;
}

/** Expands command or args against the final environment. */
export function expandCommand(args: string[] | undefined, env: KeyValue[]): string[] {
  const m = new Map(env.map((e) => [e.key, e.value]));
  return (args ?? []).map((a) => expandVars(a, (n) => m.get(n)));
}
