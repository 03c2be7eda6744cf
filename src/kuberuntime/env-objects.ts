// The API objects a container's env reads, fetched before the env is built: the ConfigMaps and
// Secrets its envFrom and valueFrom name, and the service variables. Fetching is the only async
// part; env.ts then applies the kubelet's rules (optional, missing keys, precedence) to what came
// back, so that a reference is judged where it is used, as makeEnvironmentVariables does.
import type { ConfigMap, Container, Pod, Secret } from 'kubernetes-types/core/v1';
import type { PodObjects } from '../node/pod-objects.js';
import { isStaticPod } from '../k8s/priority.js';
import { errorMessage } from '../util/error-message.js';
import { serviceEnvVars } from './service-env.js';

/** One object as the source answered: found, known not to exist, or not knowable now. */
export type Fetched<T> = { readonly found: T } | { readonly notFound: true } | { readonly error: string };

export interface EnvObjects {
  readonly configMaps: ReadonlyMap<string, Fetched<ConfigMap>>;
  readonly secrets: ReadonlyMap<string, Fetched<Secret>>;
  /** The service variables (service-env.ts); added after the container's own, never over them. */
  readonly serviceEnv: ReadonlyMap<string, string>;
}

/** What the kubelet says when it has not listed Services yet (it waits for that for API pods only). */
export const SERVICES_NOT_SYNCED = 'services have not yet been read at least once, cannot construct envvars';

export class ServicesNotReadError extends Error {
  override name = 'ServicesNotReadError';
}

/** The names of the ConfigMaps and Secrets the container's env refers to, each once. */
export function envReferences(container: Container): { configMaps: Set<string>; secrets: Set<string> } {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  for (const f of container.envFrom ?? []) {
    if (f.configMapRef) configMaps.add(f.configMapRef.name ?? '');
    else if (f.secretRef) secrets.add(f.secretRef.name ?? '');
  }
  for (const v of container.env ?? []) {
    // A literal value wins over valueFrom, so such a reference is never read.
    if (v.value || !v.valueFrom) continue;
    if (v.valueFrom.configMapKeyRef) configMaps.add(v.valueFrom.configMapKeyRef.name ?? '');
    else if (v.valueFrom.secretKeyRef) secrets.add(v.valueFrom.secretKeyRef.name ?? '');
  }
  return { configMaps, secrets };
}

async function fetchOne<T>(get: () => Promise<T | undefined>): Promise<Fetched<T>> {
  try {
    const found = await get();
    return found === undefined ? { notFound: true } : { found };
  } catch (err) {
    return { error: errorMessage(err) };
  }
}

/**
 * Everything the env of `container` needs from the API. Without PodObjects (no API server)
 * there is nothing: references then fail in env.ts as the kubelet without a client fails them,
 * and there are no service variables. A static pod takes the services known now, an API pod
 * waits (ServicesNotReadError) until they have been read once, as the kubelet does.
 */
export async function fetchEnvObjects(
  pod: Pod,
  container: Container,
  podObjects: PodObjects | undefined,
): Promise<EnvObjects | undefined> {
  if (!podObjects) return undefined;
  const ns = pod.metadata?.namespace ?? '';
  const refs = envReferences(container);
  const [configMaps, secrets, services] = await Promise.all([
    Promise.all(
      [...refs.configMaps].map(async (n) => [n, await fetchOne(() => podObjects.getConfigMap(ns, n))] as const),
    ),
    Promise.all([...refs.secrets].map(async (n) => [n, await fetchOne(() => podObjects.getSecret(ns, n))] as const)),
    podObjects.getServices(ns).then(
      (list) => list,
      () => undefined,
    ),
  ]);
  if (services === undefined && !isStaticPod(pod)) throw new ServicesNotReadError(SERVICES_NOT_SYNCED);
  return {
    configMaps: new Map(configMaps),
    secrets: new Map(secrets),
    serviceEnv: serviceEnvVars(services ?? [], ns, pod.spec?.enableServiceLinks ?? true),
  };
}
