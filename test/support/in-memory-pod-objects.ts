// A PodObjects (src/node/pod-objects.ts) held in memory, for tests of what reads it: objects are
// put and deleted by the test, `servicesUnavailable` / `unavailable` make reads throw as a server
// that cannot answer does, and every change tells the listeners the registered pods that refer to it.
import type { ConfigMap, Secret, Service } from 'kubernetes-types/core/v1';
import {
  PodObjectUnavailableError,
  type PodObjects,
  type PodRef,
  type ServiceAccountToken,
  type TokenRequestFor,
} from '../../src/node/pod-objects.js';

type Kind = 'configmap' | 'secret';

export class InMemoryPodObjects implements PodObjects {
  private readonly objects = new Map<string, ConfigMap | Secret>();
  private readonly services = new Map<string, Service>();
  private readonly pods = new Map<string, PodRef>();
  private readonly listeners: Array<(uids: readonly string[]) => void> = [];
  /** Reads of ConfigMaps and Secrets throw PodObjectUnavailableError while set. */
  unavailable = false;
  /** getServices throws PodObjectUnavailableError while set (services not listed yet). */
  servicesUnavailable = false;
  readonly reads: string[] = [];

  registerPod(pod: PodRef): void {
    this.pods.set(pod.metadata.uid, pod);
  }
  unregisterPod(podUid: string): void {
    this.pods.delete(podUid);
  }
  async getConfigMap(namespace: string, name: string): Promise<ConfigMap | undefined> {
    return this.read('configmap', namespace, name) as ConfigMap | undefined;
  }
  async getSecret(namespace: string, name: string): Promise<Secret | undefined> {
    return this.read('secret', namespace, name) as Secret | undefined;
  }
  async getServiceAccountToken(_req: TokenRequestFor): Promise<ServiceAccountToken> {
    throw new PodObjectUnavailableError('no tokens in this test');
  }
  async getServices(namespace: string): Promise<readonly Service[]> {
    this.reads.push(`services ${namespace}`);
    if (this.servicesUnavailable) throw new PodObjectUnavailableError('services not listed yet');
    return [...this.services.values()].filter(
      (s) => s.metadata?.namespace === namespace || s.metadata?.namespace === 'default',
    );
  }
  onChange(listener: (podUids: readonly string[]) => void): void {
    this.listeners.push(listener);
  }

  putConfigMap(namespace: string, name: string, data: Record<string, string>): void {
    this.objects.set(`configmap/${namespace}/${name}`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { namespace, name },
      data,
    });
    this.changed();
  }
  /** `data` in clear text; stored base64 as the API has it. */
  putSecret(namespace: string, name: string, data: Record<string, string>, type = 'Opaque'): void {
    const b64 = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    this.objects.set(`secret/${namespace}/${name}`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace, name },
      type,
      data: b64,
    });
    this.changed();
  }
  putService(s: Service): void {
    this.services.set(`${s.metadata?.namespace}/${s.metadata?.name}`, s);
    this.changed();
  }
  delete(kind: Kind, namespace: string, name: string): void {
    this.objects.delete(`${kind}/${namespace}/${name}`);
    this.changed();
  }

  private read(kind: Kind, namespace: string, name: string): ConfigMap | Secret | undefined {
    this.reads.push(`${kind} ${namespace}/${name}`);
    if (this.unavailable)
      throw new PodObjectUnavailableError(`${kind} ${namespace}/${name}: the API server cannot be reached`);
    return this.objects.get(`${kind}/${namespace}/${name}`);
  }

  /** Every registered pod is told: enough for tests, which register only the pods that refer. */
  private changed(): void {
    const uids = [...this.pods.keys()];
    if (uids.length > 0) for (const l of this.listeners) l(uids);
  }
}

/** A ClusterIP Service. */
export function service(
  namespace: string,
  name: string,
  clusterIP: string,
  ports: Array<{ port: number; name?: string; protocol?: string }>,
): Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { namespace, name }, spec: { clusterIP, ports } };
}
