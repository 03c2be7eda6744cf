// An in-test PodObjects: ConfigMaps, Secrets and tokens held in maps, a change told to the pods
// registered as referring to the object (by namespace only: the tests keep one pod per namespace
// or want every pod told), and a switch that makes every read unavailable.
import type { ConfigMap, Secret, Service } from 'kubernetes-types/core/v1';
import {
  PodObjectUnavailableError,
  type PodObjects,
  type PodRef,
  type ServiceAccountToken,
  type TokenRequestFor,
} from '../../src/node/pod-objects.js';

export class FakePodObjects implements PodObjects {
  readonly configMaps = new Map<string, ConfigMap>();
  readonly secrets = new Map<string, Secret>();
  readonly registered = new Map<string, PodRef>();
  readonly tokenRequests: TokenRequestFor[] = [];
  readonly unregistered: string[] = [];
  /** Every read throws PodObjectUnavailableError while set. */
  unavailable = false;
  tokenSerial = 0;
  private readonly listeners: ((uids: readonly string[]) => void)[] = [];

  registerPod(pod: PodRef): void {
    this.registered.set(pod.metadata.uid, pod);
  }

  unregisterPod(podUid: string): void {
    this.registered.delete(podUid);
    this.unregistered.push(podUid);
  }

  private check(what: string): void {
    if (this.unavailable) throw new PodObjectUnavailableError(`${what}: the API server is not reachable`);
  }

  async getConfigMap(namespace: string, name: string): Promise<ConfigMap | undefined> {
    this.check(`configmap ${namespace}/${name}`);
    return Promise.resolve(this.configMaps.get(`${namespace}/${name}`));
  }

  async getSecret(namespace: string, name: string): Promise<Secret | undefined> {
    this.check(`secret ${namespace}/${name}`);
    return Promise.resolve(this.secrets.get(`${namespace}/${name}`));
  }

  async getServiceAccountToken(req: TokenRequestFor): Promise<ServiceAccountToken> {
    this.check(`token of ${req.serviceAccountName}`);
    this.tokenRequests.push(req);
    return Promise.resolve({
      token: `token-${req.serviceAccountName}-${req.audience ?? ''}-${req.expirationSeconds}-${this.tokenSerial}`,
      expiresAt: new Date(Date.now() + req.expirationSeconds * 1000),
    });
  }

  async getServices(): Promise<readonly Service[]> {
    return Promise.resolve([]);
  }

  onChange(listener: (podUids: readonly string[]) => void): void {
    this.listeners.push(listener);
  }

  setConfigMap(
    namespace: string,
    name: string,
    data: Record<string, string>,
    binaryData?: Record<string, string>,
  ): void {
    this.configMaps.set(`${namespace}/${name}`, {
      metadata: { namespace, name },
      data,
      ...(binaryData ? { binaryData } : {}),
    });
  }

  setSecret(namespace: string, name: string, data: Record<string, string>): void {
    const b64 = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    this.secrets.set(`${namespace}/${name}`, { metadata: { namespace, name }, data: b64 });
  }

  /** Tells the listeners that the registered pods of `namespace` changed. */
  changed(namespace: string): void {
    const uids = [...this.registered.values()]
      .filter((p) => p.metadata.namespace === namespace)
      .map((p) => p.metadata.uid);
    for (const l of this.listeners) l(uids);
  }
}
